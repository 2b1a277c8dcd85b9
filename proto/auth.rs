//! The key a client sends with every call (`authorization: Bearer KEY`), for servers started
//! with `--api-key`/`--player-key`. The CLI and the bots take it from `--api-key` or
//! `GANGS_API_KEY` and wrap their channel with [`ApiKey`], so no call can forget it.

use crate::v1::games_client::GamesClient;
use crate::v1::ladders_client::LaddersClient;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::Channel;
use tonic::{Request, Status};

/// A `gangs.v1.Games` client that sends the key (if any) with every call.
pub type KeyedClient = GamesClient<InterceptedService<Channel, ApiKey>>;

/// A `gangs.v1.Ladders` client that sends the key (if any) with every call.
pub type KeyedLaddersClient = LaddersClient<InterceptedService<Channel, ApiKey>>;

/// The `authorization` metadata to add to every call, or none.
#[derive(Clone, Default)]
pub struct ApiKey(Option<MetadataValue<Ascii>>);

impl ApiKey {
    /// No key: calls go out as they are.
    pub fn none() -> ApiKey {
        ApiKey(None)
    }

    /// The key to send; an error if it cannot travel in a header.
    pub fn new(key: Option<&str>) -> Result<ApiKey, String> {
        match key {
            None | Some("") => Ok(ApiKey(None)),
            Some(key) => format!("Bearer {key}")
                .parse()
                .map(|value| ApiKey(Some(value)))
                .map_err(|_| {
                    "the API key holds characters not allowed in a header (use printable ASCII)"
                        .to_string()
                }),
        }
    }

    /// A client on `channel` that sends this key.
    pub fn client(&self, channel: Channel) -> KeyedClient {
        GamesClient::with_interceptor(channel, self.clone())
    }

    /// A ladders client on `channel` that sends this key.
    pub fn ladders(&self, channel: Channel) -> KeyedLaddersClient {
        LaddersClient::with_interceptor(channel, self.clone())
    }
}

impl Interceptor for ApiKey {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}
