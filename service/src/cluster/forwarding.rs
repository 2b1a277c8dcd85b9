//! Forwarding: a call for a game whose shard another node holds, or for a ladder whose turn
//! another node holds, is sent to that node over gRPC with the caller's own credentials and the
//! cluster's forwarding mark (a secret of the cluster: a client cannot fake it), never sent on
//! a second time. Here: where a game's calls go (`route`, `place_new`), the connections to the
//! other nodes, the mark, and how a forwarded call's transport failure reads to the caller.

use super::shards::Holder;
use super::{setting, Cluster, CLUSTER_BUCKET, LEASE_TTL};
use crate::error::HostError;
use crate::registry::Registry;
use async_nats::jetstream::kv;
use gangs_proto::v1::games_client::GamesClient;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::Status;

/// Metadata on a call one node forwards to another: it is never forwarded again, and a
/// forwarded `Watch` is not counted against the forwarding node's connection (it carries many
/// clients' streams). Its value is the cluster's forwarding mark ([`Cluster::was_forwarded`]):
/// a client that sets the header without it is any client.
pub const FORWARDED: &str = "gangs-forwarded";
/// The key of the forwarding mark in the cluster's settings bucket.
const FORWARDING_MARK_KEY: &str = "forwarding-mark";
/// HTTP/2 windows of the connections between nodes (see `Cluster::channel`): a stream's, and
/// the whole connection's (room for 16,384 unread streams).
const PEER_STREAM_WINDOW: u32 = 64 * 1024;
const PEER_CONNECTION_WINDOW: u32 = 1 << 30;
/// How long a call forwarded to the owner node may wait for its answer (its headers, for a
/// stream) before it answers UNAVAILABLE.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// A forwarded call's failure as the caller gets it. A failure this node's own transport
/// raised (the status has a `source`): the owner not answering within [`FORWARD_TIMEOUT`], not
/// reachable ("tcp connect error"), or breaking off the call (tonic gives a dropped connection
/// as CANCELLED) is UNAVAILABLE with what to do: clients retry it (with the same action_id or
/// create_id, so nothing applies twice), and the node may be paused or dead: its shards move
/// after the lease's life. The owner's own answers (decoded from its reply: no `source`) pass
/// through unchanged.
pub fn forward_failed(status: Status) -> HostError {
    if !gangs_proto::retry::raised_here(&status) {
        return status.into();
    }
    let timed_out = std::iter::successors(std::error::Error::source(&status), |e| e.source())
        .any(|e| e.is::<tonic::TimeoutExpired>());
    let what = if timed_out {
        format!("did not answer within {FORWARD_TIMEOUT:?}")
    } else {
        "could not be reached or broke off the call".to_string()
    };
    HostError::unavailable(format!(
        "the node running this call's game or ladder {what} ({}): retry; if that node died, another takes its work over within {LEASE_TTL:?}",
        status.message()
    ))
}

/// How long a forwarded call may wait for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Patience {
    /// At most [`FORWARD_TIMEOUT`]: a game's calls.
    Brief,
    /// As long as the peer lives: a ladder's calls (a rerate reads every game).
    Long,
}

/// Where a game's calls go.
pub enum Route {
    /// This node runs the game.
    Local,
    /// Another node does: send the call there.
    Owner(GamesClient<Channel>),
}

/// The cluster's forwarding mark: the settings bucket's, or a new random one for a new cluster.
pub(super) async fn forwarding_mark(
    settings: &kv::Store,
) -> Result<tonic::metadata::AsciiMetadataValue, String> {
    let proposed = format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    );
    let mark = setting(
        settings,
        FORWARDING_MARK_KEY,
        &proposed,
        "the cluster's forwarding mark",
    )
    .await?;
    Some(mark)
        .filter(|mark| mark.len() == 64 && mark.bytes().all(|b| b.is_ascii_hexdigit()))
        .and_then(|mark| mark.parse().ok())
        .ok_or_else(|| {
            format!("NATS: the cluster's forwarding mark in {CLUSTER_BUCKET} is not 64 hex digits")
        })
}

impl Cluster {
    /// `request` marked as a call forwarded by a node of this cluster.
    pub fn mark_forwarded<T>(&self, request: &mut tonic::Request<T>) {
        request
            .metadata_mut()
            .insert(FORWARDED, self.forwarding_mark.clone());
    }

    /// Whether a call came from another node of this cluster: it carries the cluster's
    /// forwarding mark (compared in constant time: a client may not learn it by guessing).
    pub fn was_forwarded(&self, metadata: &tonic::metadata::MetadataMap) -> bool {
        metadata.get(FORWARDED).is_some_and(|value| {
            crate::secret::constant_time_eq(value.as_bytes(), self.forwarding_mark.as_bytes())
        })
    }

    /// Where `game_id`'s calls go: here if this node holds the game's shard (the registry
    /// rebuilds the game from the stream if it is not in memory), else to the shard's holder.
    /// A shard nobody holds is taken here if this node is below its share; otherwise the call
    /// answers UNAVAILABLE until a node takes it. `forwarded`: the call came from another
    /// node, and is never sent on again.
    pub async fn route(
        &self,
        game_id: &str,
        registry: &Registry,
        forwarded: bool,
    ) -> Result<Route, HostError> {
        let shard = self.shards.of(game_id);
        match self.shards.holder(shard) {
            // Held, but not renewed lately (NATS slow or unreachable, or this node was
            // paused): another node may run the game by now.
            Holder::Me if !self.shards.holds_fresh(game_id) => {}
            Holder::Me => {
                // Not running here (never loaded, unloaded, or its actor ended after a refused
                // append): before rebuilding it, check that the lease is still this node's. A
                // node refused by the stream has usually lost the lease without noticing yet;
                // rebuilding would fence the new owner's log.
                if registry.is_loaded(game_id) || self.shards.confirm(shard, registry).await? {
                    return Ok(Route::Local);
                }
            }
            Holder::Other(owner) if !forwarded => {
                let channel = self.channel(&owner, Patience::Brief)?;
                return Ok(Route::Owner(GamesClient::new(channel)));
            }
            Holder::Other(_) => {}
            Holder::Free => {
                if self.shards.take(shard, registry).await? {
                    return Ok(Route::Local);
                }
            }
        }
        Err(HostError::unavailable(format!(
            "game {game_id} is changing hands between nodes (its shard {shard} is being taken over): retry"
        )))
    }

    /// Where a new game is created: here when this node holds a shard (the game gets an id of
    /// one of them), else at a node that does.
    pub fn place_new(&self) -> Result<Route, HostError> {
        match self.shards.any_holder() {
            Some(Holder::Me) => Ok(Route::Local),
            Some(Holder::Other(owner)) => Ok(Route::Owner(GamesClient::new(
                self.channel(&owner, Patience::Brief)?,
            ))),
            _ => Err(HostError::unavailable(
                "the cluster's nodes are still sharing out its shards: retry in a second",
            )),
        }
    }

    /// The connection to the node at `url` (made once, kept) for calls answered within
    /// [`FORWARD_TIMEOUT`] (`Patience::Brief`), or for calls that may take longer (a ladder's
    /// rerate or fit) and streams (`Patience::Long`: a silent peer is still dropped by the
    /// keepalive).
    pub fn channel(&self, url: &str, patience: Patience) -> Result<Channel, HostError> {
        let mut peers = self.peers.lock().expect("peers lock");
        let key = (url.to_string(), patience);
        if let Some(channel) = peers.get(&key) {
            return Ok(channel.clone());
        }
        let mut endpoint = Channel::from_shared(url.to_string())
            .map_err(|e| {
                HostError::internal(format!("bad owner address {url:?} in the lease: {e}"))
            })?
            .connect_timeout(Duration::from_secs(2))
            // An owner that is paused or cut off still accepts TCP (the kernel answers): without
            // these, a forwarded call would wait on it forever. A silent connection is dropped,
            // breaking its streams so that watchers resume by seq.
            .http2_keep_alive_interval(Duration::from_secs(2))
            .keep_alive_timeout(Duration::from_secs(3))
            .keep_alive_while_idle(true)
            // This one connection carries every client's forwarded calls, and what a stream
            // holds unread counts against the connection's window until it is read. A client
            // that stops reading its forwarded Watch streams stops this node reading them from
            // the owner: with hyper's defaults (2 MB a stream, 5 MB the connection) a few of
            // them stalled every call between the two nodes. A small stream window and a
            // large connection window: an unread stream holds at most 64 KB, never the link.
            .initial_stream_window_size(PEER_STREAM_WINDOW)
            .initial_connection_window_size(PEER_CONNECTION_WINDOW);
        if patience == Patience::Brief {
            // A call unanswered within FORWARD_TIMEOUT (its headers, for a stream) answers
            // UNAVAILABLE (clients retry with the same action id; the lease expires meanwhile).
            endpoint = endpoint.timeout(FORWARD_TIMEOUT);
        }
        let channel = endpoint.connect_lazy();
        peers.insert(key, channel.clone());
        Ok(channel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gangs_proto::v1 as pb;
    use std::time::Duration;

    /// A call forwarded to the "node" on `port` (with the forward's `timeout`, if any), as
    /// the forwarding node's transport fails it.
    async fn forwarded_to(port: u16, timeout: Option<Duration>) -> Status {
        let mut endpoint =
            tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}")).unwrap();
        if let Some(timeout) = timeout {
            endpoint = endpoint.timeout(timeout);
        }
        GamesClient::new(endpoint.connect_lazy())
            .cancel_game(pb::CancelGameRequest::default())
            .await
            .unwrap_err()
    }

    /// A node that accepts connections and, with `keep`, holds them without a word, else
    /// drops each at once.
    async fn peer(keep: bool) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                if keep {
                    held.push(connection);
                }
            }
        });
        port
    }

    #[tokio::test]
    async fn an_owner_unreachable_broken_off_or_silent_is_unavailable_and_its_own_answers_pass() {
        // A port nobody listens on: the forward fails in this node's own transport.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let answered = forward_failed(forwarded_to(port, None).await);
        assert_eq!(answered.code(), tonic::Code::Unavailable);
        assert!(
            answered.message().contains("could not be reached"),
            "{answered:?}"
        );
        assert!(answered.message().contains("retry"), "{answered:?}");
        // A node that accepts the connection and drops it (it died mid-call): whatever code
        // tonic gives the broken call, the caller gets UNAVAILABLE and retries.
        let answered = forward_failed(forwarded_to(peer(false).await, None).await);
        assert_eq!(answered.code(), tonic::Code::Unavailable, "{answered:?}");
        assert!(answered.message().contains("broke off"), "{answered:?}");
        // A node that accepts and never answers: the forward's timeout.
        let silent = forwarded_to(peer(true).await, Some(Duration::from_millis(200))).await;
        let answered = forward_failed(silent);
        assert_eq!(answered.code(), tonic::Code::Unavailable, "{answered:?}");
        assert!(
            answered.message().contains("did not answer within"),
            "{answered:?}"
        );
        // The owner's own refusal (decoded from its answer: no transport error behind it) is
        // the caller's answer as it is.
        let refusal = Status::unavailable("game g is changing hands: retry");
        assert_eq!(
            forward_failed(refusal).message(),
            "game g is changing hands: retry"
        );
        let refusal = Status::not_found("no game g");
        assert_eq!(forward_failed(refusal).code(), tonic::Code::NotFound);
    }
}
