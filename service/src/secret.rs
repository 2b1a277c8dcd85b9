//! Comparing secrets a client sends (API keys, seat tokens, invitations) with the ones the host
//! holds, without telling a prober how much of its guess was right; and the one digest the host
//! keeps of a secret or makes a key of a name with.

/// SHA-256 of `text`, in lower-case hex: a bot key as the ladder keeps it, a KV key made of a
/// name that KV keys may not hold (a webhook's URL, a turn's name).
pub fn sha256_hex(text: &str) -> String {
    gangs_hosted::compile::sha256_hex(text.as_bytes())
}

/// Equality whose time does not depend on where the first difference is.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn equal_only_when_every_byte_and_the_length_match() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
