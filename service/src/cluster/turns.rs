//! Turns: work one node of the cluster does for everyone (sending to a webhook receiver,
//! running a ladder) is a *turn*, a lease in `GANGS_SENDERS` under the work's name holding the
//! holder's URL. And the ladders' names: `GANGS_LADDERS` maps each ladder's name to its log and
//! its creation (a name is unique in the cluster); every node follows it, so a ladder created
//! through one node is known to all within a second (`ladder/nodes.rs`).

use super::{kv_error, Cluster, RENEW_EVERY};
use crate::error::HostError;
use async_nats::jetstream::kv;
use gangs_proto::v1 as pb;
use prost::Message;
use std::collections::HashMap;

/// A ladder as the cluster knows it by name: its log, and its creation.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderName {
    pub log_id: String,
    pub info: pb::Ladder,
}

impl LadderName {
    /// The bucket's value: the log id (its fixed length), then the encoded creation.
    fn encode(&self) -> Vec<u8> {
        let mut value = self.log_id.clone().into_bytes();
        self.info.encode(&mut value).expect("a Vec grows");
        value
    }

    pub(super) fn decode(value: &[u8]) -> Option<LadderName> {
        let (log_id, info) = value.split_at_checked(crate::store::GAME_ID_LEN)?;
        Some(LadderName {
            log_id: String::from_utf8(log_id.to_vec()).ok()?,
            info: pb::Ladder::decode(info).ok()?,
        })
    }
}

/// A ladder's key in the ladders' bucket: its name in hex (a name may hold dots where KV keys
/// may not).
fn ladder_key(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

/// A turn's key: the SHA-256 of its name in hex (a webhook URL is no valid KV key).
fn turn_key(name: &str) -> String {
    crate::secret::sha256_hex(name)
}

impl Cluster {
    /// Waits until this node is the one that sends to the webhook receiver `name` (the
    /// receiver's lease in `GANGS_SENDERS`: taken with `create`, renewed every second by
    /// revision, gone [`LEASE_TTL`] after its holder stops), or until `closing`. The answer
    /// turns true when the lease is lost (another node sends from then on); dropping it lets
    /// the lease go at once.
    pub async fn turn(
        &self,
        name: &str,
        closing: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Option<tokio::sync::watch::Receiver<bool>> {
        let key = turn_key(name);
        let revision = loop {
            if *closing.borrow() {
                return None;
            }
            if let Ok(revision) = self
                .senders
                .create(key.as_str(), self.me.clone().into())
                .await
            {
                break revision;
            }
            // Held by another node (or NATS unreachable): try again once it may have expired.
            tokio::select! {
                _ = tokio::time::sleep(RENEW_EVERY) => {}
                _ = closing.wait_for(|&closed| closed) => return None,
            }
        };
        tracing::info!(turn = name, "this node took the turn");
        let (lost, turn) = tokio::sync::watch::channel(false);
        let (senders, me) = (self.senders.clone(), self.me.clone());
        tokio::spawn(async move {
            let mut revision = revision;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(RENEW_EVERY) => {}
                    () = lost.closed() => {
                        let _ = senders.purge_expect_revision(&key, Some(revision)).await;
                        return;
                    }
                }
                match senders.update(&key, me.clone().into(), revision).await {
                    Ok(next) => revision = next,
                    Err(e) => {
                        tracing::warn!(key = %key, "lost a turn ({e}): another node takes it");
                        lost.send_replace(true);
                        return;
                    }
                }
            }
        });
        Some(turn)
    }

    /// The URL of the node holding the turn `name` now, if any node does.
    pub async fn turn_holder(&self, name: &str) -> Result<Option<String>, HostError> {
        let entry = self.senders.entry(turn_key(name)).await.map_err(kv_error)?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .map(|e| String::from_utf8_lossy(&e.value).into_owned()))
    }

    /// A stream of the changes of turn `name` from now on (taken, renewed, let go): a caller
    /// waiting for a turn to change hands is woken by it rather than asking again and again.
    /// (A lease that expires unrenewed makes no change: the node that takes it next does.)
    pub async fn turn_changes(&self, name: &str) -> Result<kv::Watch, HostError> {
        self.senders.watch(turn_key(name)).await.map_err(kv_error)
    }

    /// A count that moves each time the ladders' bucket changes (a ladder created, renamed,
    /// deleted through any node); its sender is dropped if the bucket's watch ends.
    pub fn ladder_name_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.ladder_name_changes.clone()
    }

    /// Every ladder of the cluster by name, as the ladders' bucket has it (a second late at
    /// most).
    pub fn ladder_names(&self) -> HashMap<String, LadderName> {
        let names = self.ladder_names.lock().expect("ladder names lock");
        names
            .values()
            .map(|l| (l.info.name.clone(), l.clone()))
            .collect()
    }

    /// The ladder `name`, asking the bucket itself when this node has not heard of it yet.
    pub async fn ladder_name(&self, name: &str) -> Result<Option<LadderName>, HostError> {
        let key = ladder_key(name);
        if let Some(known) = self
            .ladder_names
            .lock()
            .expect("ladder names lock")
            .get(&key)
        {
            return Ok(Some(known.clone()));
        }
        let entry = self.ladders.entry(key).await.map_err(kv_error)?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .and_then(|e| LadderName::decode(&e.value)))
    }

    /// Enters a new ladder's name: false if the name is taken already (by any node).
    pub async fn add_ladder_name(&self, ladder: &LadderName) -> Result<bool, HostError> {
        let key = ladder_key(&ladder.info.name);
        match self
            .ladders
            .create(key.as_str(), ladder.encode().into())
            .await
        {
            Ok(_) => {
                self.ladder_names
                    .lock()
                    .expect("ladder names lock")
                    .insert(key, ladder.clone());
                Ok(true)
            }
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(kv_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladder_name_survives_the_bucket_and_a_bad_value_is_none() {
        let ladder = LadderName {
            log_id: "ladder0123abcdef".into(),
            info: pb::Ladder {
                name: "class.2026".into(),
                kind: "gang-of-four".into(),
                players: 4,
                ..Default::default()
            },
        };
        assert_eq!(LadderName::decode(&ladder.encode()), Some(ladder.clone()));
        // Too short for a log id, or a creation that does not decode.
        assert_eq!(LadderName::decode(b"ladder"), None);
        let mut bad = ladder.log_id.clone().into_bytes();
        bad.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert_eq!(LadderName::decode(&bad), None);
    }

    #[test]
    fn keys_are_valid_nats_keys_whatever_the_name() {
        // KV keys allow letters, digits, '-', '_', '/', '=' and inner dots only; ladder names
        // may start or end with a dot.
        for name in [".x", "a..b", "end.", "A-b_c"] {
            let key = ladder_key(name);
            assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{key}");
            assert_ne!(ladder_key(name), ladder_key("other"));
        }
        let turn = turn_key("ladder class");
        assert_eq!(turn.len(), 64);
        assert_ne!(turn, turn_key("http://127.0.0.1:9/hooks"));
    }
}
