//! The `gangs.v1.Games` service as the server mounts it: every method goes to the generated
//! `GamesServer`, except `Watch`, which is served here with a codec that writes each update's
//! bytes as they are.
//!
//! Why: the actor encodes each audience's update once (`actor/watch.rs`), and every stream of
//! that audience carries the same bytes. The generated server would want a `pb::Update` per
//! stream and encode it again per stream: a deep clone and an encoding per watcher, which the
//! profile of a game watched by every seat and a spectator showed among the top costs. The
//! bytes are an encoded `pb::Update`, so the wire is exactly what the generated code wrote:
//! clients see no difference.

use crate::actor::Encoded;
use crate::api::{EncodedStream, GamesService};
use bytes::BufMut;
use gangs_proto::codec::ClearCodec;
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_server::GamesServer;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic::server::{NamedService, ServerStreamingService};
use tonic::{Request, Response, Status};

/// The gRPC path of `Watch`.
const WATCH_PATH: &str = "/gangs.v1.Games/Watch";

/// `GamesServer` with `Watch` served from pre-encoded updates.
#[derive(Clone)]
pub struct GamesRoutes {
    generated: GamesServer<GamesService>,
    service: GamesService,
    /// `--max-request-bytes`, as the generated server applies it to every other method.
    max_request_bytes: usize,
}

impl GamesRoutes {
    pub fn new(service: GamesService, max_request_bytes: usize) -> Self {
        GamesRoutes {
            generated: GamesServer::new(service.clone())
                .max_decoding_message_size(max_request_bytes),
            service,
            max_request_bytes,
        }
    }
}

impl NamedService for GamesRoutes {
    const NAME: &'static str = <GamesServer<GamesService> as NamedService>::NAME;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, Infallible>> + Send>>;

impl tower::Service<http::Request<Body>> for GamesRoutes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if request.uri().path() != WATCH_PATH {
            return self.generated.call(request);
        }
        let service = self.service.clone();
        let max_request_bytes = self.max_request_bytes;
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(WatchCodec)
                .apply_max_message_size_config(Some(max_request_bytes), None);
            Ok(grpc.server_streaming(Watch(service), request).await)
        })
    }
}

/// The `Watch` method over [`GamesService::watch_encoded`].
struct Watch(GamesService);

impl ServerStreamingService<pb::WatchRequest> for Watch {
    type Response = Encoded;
    type ResponseStream = crate::metrics::Watched<EncodedStream>;
    type Future = Pin<
        Box<dyn Future<Output = Result<Response<Self::ResponseStream>, Status>> + Send + 'static>,
    >;

    fn call(&mut self, request: Request<pb::WatchRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move { service.watch_encoded(request).await.map(Response::new) })
    }
}

/// Decodes a `WatchRequest` as the generated code does (`ClearCodec`); writes an encoded `Update` as it is.
#[derive(Default)]
struct WatchCodec;

impl Codec for WatchCodec {
    type Encode = Encoded;
    type Decode = pb::WatchRequest;
    type Encoder = PassThrough;
    // A body that is not a WatchRequest answers INVALID_ARGUMENT, as every other method.
    type Decoder = <ClearCodec<pb::Update, pb::WatchRequest> as Codec>::Decoder;

    fn encoder(&mut self) -> PassThrough {
        PassThrough
    }

    fn decoder(&mut self) -> Self::Decoder {
        ClearCodec::<pb::Update, pb::WatchRequest>::default().decoder()
    }
}

/// Writes bytes that are already a message's encoding.
struct PassThrough;

impl Encoder for PassThrough {
    type Item = Encoded;
    type Error = Status;

    fn encode(&mut self, item: Encoded, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}
