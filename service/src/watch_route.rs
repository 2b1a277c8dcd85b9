//! The `gangs.v1.Games` service as the server mounts it: every method goes to the generated
//! `GamesServer`, except `Watch`, which is served here: tonic reads the request and makes the
//! response's headers (or a refusal's status), and the updates go out as the actor encoded them.
//!
//! Why: the actor encodes each audience's update once (`actor/watch.rs`), as a whole gRPC
//! message (prefix included), and every stream of that audience carries the same bytes. The
//! generated server would want a `pb::Update` per stream and encode it again per stream (a deep
//! clone and an encoding per watcher: among the top costs of a game watched by every seat and a
//! spectator); tonic's own encoder, given bytes, would still copy them into a buffer of its own
//! and prefix them per stream. The bytes are an encoded `pb::Update` in gRPC's framing, so the
//! wire is exactly what the generated code wrote: clients see no difference.

use crate::api::{EncodedStream, GamesService};
use bytes::Bytes;
use gangs_proto::codec::ClearCodec;
use gangs_proto::v1 as pb;
use gangs_proto::v1::games_server::GamesServer;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
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
            // tonic reads the request (its size limit, compression, metadata) and makes the
            // response's headers, or the status of a refusal; an opened stream's updates are
            // then written by `UpdatesBody`, not by tonic's encoder.
            let opened = Arc::new(Mutex::new(None));
            let mut grpc = tonic::server::Grpc::new(WatchCodec)
                .apply_max_message_size_config(Some(max_request_bytes), None);
            let watch = Watch {
                service,
                opened: opened.clone(),
            };
            let response = grpc.server_streaming(watch, request).await;
            let updates = opened.lock().expect("the opened stream's slot").take();
            Ok(match updates {
                Some(updates) => {
                    let (parts, _nothing) = response.into_parts();
                    http::Response::from_parts(parts, Body::new(UpdatesBody::new(updates)))
                }
                None => response,
            })
        })
    }
}

/// An opened `Watch` stream: the actor's (or a forwarded stream's) updates.
type Updates = crate::metrics::Watched<EncodedStream>;

/// The `Watch` method over [`GamesService::watch_encoded`]. tonic is given a stream with no
/// items to encode (their type has no values); the opened one is left in `opened` for
/// [`UpdatesBody`].
struct Watch {
    service: GamesService,
    opened: Arc<Mutex<Option<Updates>>>,
}

impl ServerStreamingService<pb::WatchRequest> for Watch {
    type Response = Infallible;
    type ResponseStream = tokio_stream::Empty<Result<Infallible, Status>>;
    type Future = Pin<
        Box<dyn Future<Output = Result<Response<Self::ResponseStream>, Status>> + Send + 'static>,
    >;

    fn call(&mut self, request: Request<pb::WatchRequest>) -> Self::Future {
        let service = self.service.clone();
        let opened = self.opened.clone();
        Box::pin(async move {
            let updates = service.watch_encoded(request).await?;
            *opened.lock().expect("the opened stream's slot") = Some(updates);
            Ok(Response::new(tokio_stream::empty()))
        })
    }
}

/// Decodes a `WatchRequest` as the generated code does (`ClearCodec`); encodes nothing: the
/// updates go out through `UpdatesBody`.
#[derive(Default)]
struct WatchCodec;

impl Codec for WatchCodec {
    type Encode = Infallible;
    type Decode = pb::WatchRequest;
    type Encoder = EncodesNothing;
    // A body that is not a WatchRequest answers INVALID_ARGUMENT, as every other method.
    type Decoder = <ClearCodec<pb::Update, pb::WatchRequest> as Codec>::Decoder;

    fn encoder(&mut self) -> EncodesNothing {
        EncodesNothing
    }

    fn decoder(&mut self) -> Self::Decoder {
        ClearCodec::<pb::Update, pb::WatchRequest>::default().decoder()
    }
}

/// The encoder of a stream that has no items.
struct EncodesNothing;

impl Encoder for EncodesNothing {
    type Item = Infallible;
    type Error = Status;

    fn encode(&mut self, item: Infallible, _: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {}
    }
}

/// The body of an opened `Watch`: each update's gRPC message in a DATA frame as the actor
/// encoded it (one buffer shared by every stream of its audience: neither copied nor
/// prefixed again per stream), then the trailers with the status that ended the stream (OK
/// when the game's updates ended, the error otherwise), as tonic's encoder writes them.
struct UpdatesBody {
    /// None once the trailers are out: the stream, and its watcher slot, let go at once.
    updates: Option<Updates>,
}

impl UpdatesBody {
    fn new(updates: Updates) -> Self {
        UpdatesBody {
            updates: Some(updates),
        }
    }
}

impl http_body::Body for UpdatesBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Status>>> {
        let Some(updates) = self.updates.as_mut() else {
            return Poll::Ready(None);
        };
        let ended = match std::task::ready!(tokio_stream::Stream::poll_next(Pin::new(updates), cx))
        {
            Some(Ok(update)) => {
                return Poll::Ready(Some(Ok(http_body::Frame::data(update.into_grpc_message()))))
            }
            Some(Err(status)) => status,
            None => Status::ok(""),
        };
        self.updates = None;
        let mut trailers = http::HeaderMap::new();
        Poll::Ready(Some(
            ended
                .add_header(&mut trailers)
                .map(|()| http_body::Frame::trailers(trailers)),
        ))
    }

    fn is_end_stream(&self) -> bool {
        self.updates.is_none()
    }
}
