//! The `gangs.v1.Ladders` service as the server mounts it: `SubmitBot` (a hosted bot's
//! module or component, megabytes) is read up to the larger of `--max-module-bytes` and
//! `--max-component-bytes`, every other method up to
//! `--max-request-bytes`, as by the generated server alone. One service, two read limits.

use super::api::LaddersService;
use gangs_proto::v1::ladders_server::LaddersServer;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::server::NamedService;

/// The gRPC path of `SubmitBot`.
const SUBMIT_PATH: &str = "/gangs.v1.Ladders/SubmitBot";

#[derive(Clone)]
pub struct LaddersRoutes {
    small: LaddersServer<LaddersService>,
    submit: LaddersServer<LaddersService>,
    max_module_bytes: usize,
}

impl LaddersRoutes {
    pub fn new(service: LaddersService, max_request_bytes: usize, max_module_bytes: usize) -> Self {
        LaddersRoutes {
            small: LaddersServer::new(service.clone()).max_decoding_message_size(max_request_bytes),
            // The module and the request's few other fields.
            submit: LaddersServer::new(service).max_decoding_message_size(max_module_bytes + 4096),
            max_module_bytes,
        }
    }
}

impl NamedService for LaddersRoutes {
    const NAME: &'static str = <LaddersServer<LaddersService> as NamedService>::NAME;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, Infallible>> + Send>>;

impl tower::Service<http::Request<Body>> for LaddersRoutes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if request.uri().path() != SUBMIT_PATH {
            return self.small.call(request);
        }
        let answer = self.submit.call(request);
        let limit = self.max_module_bytes;
        Box::pin(async move {
            let response = answer.await?;
            Ok(crate::front::errors::request_size_status(
                response,
                limit,
                "a hosted bot's module or component: --max-module-bytes, --max-component-bytes",
            ))
        })
    }
}
