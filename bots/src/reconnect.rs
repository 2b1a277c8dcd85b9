//! Getting a client back after the connection broke: exponential backoff from 100 ms to 1 s,
//! for at most 60 s of continuous outage, then give up with a clear error.

use crate::BotError;
use gangs_proto::auth::{ApiKey, KeyedClient};
use std::path::Path;
use std::time::Instant;
use tonic::transport::Endpoint;

/// A client that sends the bot's `--api-key` with every call.
pub type Client = KeyedClient;

pub use gangs_proto::retry::{Backoff, FIRST_DELAY, MAX_DELAY, OUTAGE_BUDGET};

/// Connects to one server URL, and again after failures, within the outage budget.
pub struct Reconnector {
    url: String,
    endpoint: Endpoint,
    key: ApiKey,
    backoff: Backoff,
    outage_since: Option<Instant>,
}

impl Reconnector {
    /// `ca`: the PEM certificate(s) to trust for an `https://` server (else the system roots).
    /// `key`: the `--api-key` sent with every call.
    pub fn new(url: &str, ca: Option<&Path>, key: Option<&str>) -> Result<Self, BotError> {
        let endpoint = gangs_proto::connect::endpoint(url, ca).map_err(BotError::BadServer)?;
        let key = ApiKey::new(key).map_err(BotError::BadKey)?;
        Ok(Reconnector {
            url: url.to_string(),
            endpoint,
            key,
            backoff: Backoff::default(),
            outage_since: None,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The connection works (an update came through): the next failure starts a new outage.
    pub fn healthy(&mut self) {
        self.outage_since = None;
        self.backoff = Backoff::default();
    }

    /// A ladders client (`--ladder`), reconnecting as [`Reconnector::connect`] does.
    pub async fn connect_ladders(
        &mut self,
        why: &str,
    ) -> Result<gangs_proto::auth::KeyedLaddersClient, BotError> {
        let channel = self.connect_channel(why).await?;
        Ok(self.key.ladders(channel))
    }

    /// A client, trying immediately and then with backoff until the outage budget is spent.
    /// `why` is the failure that brought us here (for the log and the final error).
    pub async fn connect(&mut self, why: &str) -> Result<Client, BotError> {
        let channel = self.connect_channel(why).await?;
        Ok(self.key.client(channel))
    }

    /// A connection, trying immediately and then with backoff until the outage budget is spent.
    async fn connect_channel(&mut self, why: &str) -> Result<tonic::transport::Channel, BotError> {
        let since = match self.outage_since {
            // The last connection broke before anything came through: a server that accepts
            // connections but fails every call (a cluster node whose peer just died, say).
            // Wait before trying again rather than spinning, within the same budget.
            Some(since) => {
                if since.elapsed() >= OUTAGE_BUDGET {
                    return Err(BotError::ServerLost {
                        url: self.url.clone(),
                        seconds: OUTAGE_BUDGET.as_secs(),
                        last: why.to_string(),
                    });
                }
                tokio::time::sleep(self.backoff.next_delay()).await;
                since
            }
            None => *self.outage_since.insert(Instant::now()),
        };
        tracing::debug!(url = %self.url, why, "connecting");
        loop {
            let last = match self.endpoint.connect().await {
                Ok(channel) => return Ok(channel),
                Err(e) => match gangs_proto::connect::tls_failure(&self.url, &e) {
                    Some(why) => {
                        return Err(BotError::BadServer(gangs_proto::connect::BadEndpoint(why)))
                    }
                    None => gangs_proto::innermost_cause(&e),
                },
            };
            tracing::debug!(url = %self.url, error = %last, "connect failed");
            if self.backoff.is_fresh() {
                tracing::warn!(
                    "cannot reach the server at {} ({last}): retrying for up to {} s",
                    self.url,
                    OUTAGE_BUDGET.as_secs()
                );
            }
            if since.elapsed() >= OUTAGE_BUDGET {
                return Err(BotError::ServerLost {
                    url: self.url.clone(),
                    seconds: OUTAGE_BUDGET.as_secs(),
                    last,
                });
            }
            tokio::time::sleep(self.backoff.next_delay()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_url_is_a_clear_error() {
        let err = Reconnector::new("not a url", None, None).err().unwrap();
        assert!(err.to_string().contains("--server http://"));
    }
}
