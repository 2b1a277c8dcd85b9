//! A decision's random bytes: HMAC-SHA256 keyed by the game's seed over the bot, the seat, the
//! update's seq and a block counter. A rerun of the decision draws the same bytes, and the
//! bytes say nothing of the seed (so nothing of the deal).

use crate::Decision;
use sha2::{Digest, Sha256};

const BLOCK: usize = 64;

pub struct Stream {
    /// The hash with the inner and the outer padded key absorbed (HMAC's two passes).
    inner: Sha256,
    outer: Sha256,
    /// `BOT@VERSION` ‖ 0 ‖ seat ‖ seq: every block's message before its counter.
    message: Vec<u8>,
    counter: u64,
    block: [u8; 32],
    /// Bytes of `block` already given out.
    used: usize,
}

impl Stream {
    pub fn new(decision: &Decision<'_>) -> Stream {
        let mut key = [0u8; BLOCK];
        key[..8].copy_from_slice(&decision.seed.to_le_bytes());
        let pad = |byte: u8| {
            let mut hash = Sha256::new();
            hash.update(key.map(|k| k ^ byte));
            hash
        };
        let mut message = decision.bot.as_bytes().to_vec();
        message.push(0);
        message.extend_from_slice(&decision.seat.to_le_bytes());
        message.extend_from_slice(&decision.seq.to_le_bytes());
        Stream {
            inner: pad(0x36),
            outer: pad(0x5c),
            message,
            counter: 0,
            block: [0; 32],
            used: 32,
        }
    }

    fn next_block(&mut self) {
        let mut inner = self.inner.clone();
        inner.update(&self.message);
        inner.update(self.counter.to_le_bytes());
        let mut outer = self.outer.clone();
        outer.update(inner.finalize());
        self.block = outer.finalize().into();
        self.counter += 1;
        self.used = 0;
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        for byte in out {
            if self.used == self.block.len() {
                self.next_block();
            }
            *byte = self.block[self.used];
            self.used += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(seed: u64, seq: u64) -> Decision<'static> {
        Decision {
            input: b"{}",
            clock_ns: 0,
            seed,
            bot: "mc@1",
            seat: 2,
            seq,
        }
    }

    #[test]
    fn the_stream_is_hmac_sha256_of_the_decision() {
        // RFC 4231's construction, checked against a direct computation.
        let mut stream = Stream::new(&decision(7, 9));
        let mut got = [0u8; 40];
        stream.fill(&mut got);
        let mut key = [0u8; 64];
        key[..8].copy_from_slice(&7u64.to_le_bytes());
        let hmac = |counter: u64| {
            let mut message = b"mc@1\0".to_vec();
            message.extend_from_slice(&2u32.to_le_bytes());
            message.extend_from_slice(&9u64.to_le_bytes());
            message.extend_from_slice(&counter.to_le_bytes());
            let inner = Sha256::new()
                .chain_update(key.map(|k| k ^ 0x36))
                .chain_update(&message)
                .finalize();
            let outer: [u8; 32] = Sha256::new()
                .chain_update(key.map(|k| k ^ 0x5c))
                .chain_update(inner)
                .finalize()
                .into();
            outer
        };
        assert_eq!(&got[..32], &hmac(0));
        assert_eq!(&got[32..], &hmac(1)[..8]);
    }

    #[test]
    fn the_same_decision_draws_the_same_bytes_and_another_does_not() {
        let draw = |d: Decision<'_>| {
            let mut out = [0u8; 16];
            Stream::new(&d).fill(&mut out);
            out
        };
        assert_eq!(draw(decision(1, 5)), draw(decision(1, 5)));
        assert_ne!(draw(decision(1, 5)), draw(decision(1, 6)));
        assert_ne!(draw(decision(1, 5)), draw(decision(2, 5)));
    }
}
