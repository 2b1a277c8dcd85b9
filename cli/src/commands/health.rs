//! `gangs health [--service NAME] [--timeout-ms MS]`: asks the server's standard gRPC health
//! service (`grpc.health.v1.Health/Check`) whether it serves. Exit code 0 when it does, so a
//! container's health check needs no other tool (`HEALTHCHECK CMD gangs health`).

use crate::client::Context;
use crate::error::CliError;
use clap::Args;
use serde_json::json;
use std::time::Duration;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

#[derive(Args)]
pub struct HealthArgs {
    /// The service to ask about; the default is the game service. `""` asks about the server
    /// as a whole.
    #[arg(long, default_value = "gangs.v1.Games")]
    service: String,

    /// Give up (exit code 1) when there is no answer after this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 3000)]
    timeout_ms: u64,
}

pub async fn run(args: HealthArgs, context: &Context) -> Result<(), CliError> {
    let timeout = Duration::from_millis(args.timeout_ms);
    let ask = async {
        let mut client = HealthClient::new(context.channel().await?);
        client
            .check(HealthCheckRequest {
                service: args.service.clone(),
            })
            .await
            .map_err(|s| context.refused(s))
    };
    let answer = tokio::time::timeout(timeout, ask).await.map_err(|_| {
        CliError::new(
            "DEADLINE_EXCEEDED",
            format!(
                "no health answer from {} within {} ms",
                context.server, args.timeout_ms
            ),
        )
    })??;
    let status =
        ServingStatus::try_from(answer.into_inner().status).unwrap_or(ServingStatus::Unknown);
    let name = status.as_str_name();
    if status != ServingStatus::Serving {
        return Err(CliError::new(
            "UNAVAILABLE",
            format!("{} answers {name} for {:?}", context.server, args.service),
        ));
    }
    context.out.emit(
        json!({ "server": context.server, "service": args.service, "status": name }),
        || format!("{}: {name}", context.server),
    );
    Ok(())
}
