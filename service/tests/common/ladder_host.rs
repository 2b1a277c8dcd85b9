//! The host with its ladders, in process over two logs in memory, as `gangs-server` wires it
//! (no keys, no cluster): for tests on tokio's paused time (a store with threads of its own
//! would let the paused clock run ahead). Stopped through the server's shutdown path, or
//! crashed (its handles on the logs cut first, so nothing it does after is durable); started
//! again over the same logs, it is a restart.

use super::MemoryStore;
use gangs_service::actor::Settings;
use gangs_service::api::GamesService;
use gangs_service::ladder::api::LaddersService;
use gangs_service::ladder::hosted::Hosting;
use gangs_service::ladder::Policy;
use gangs_service::registry::Registry;
use gangs_service::store::Logs;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The games' log and the ladders' log.
pub type MemoryLogs = (Arc<MemoryStore>, Arc<MemoryStore>);

/// One incarnation of the host.
#[derive(Clone)]
pub struct LadderHost {
    pub registry: Registry,
    pub games: Arc<GamesService>,
    pub ladders: LaddersService,
    /// The hosted bots' runner (its pool's threads work outside tokio).
    pub hosting: Arc<Hosting>,
    /// This incarnation's handles on the two logs.
    logs: MemoryLogs,
    stop: Arc<watch::Sender<bool>>,
}

impl LadderHost {
    /// Rebuilds the games and the ladders from `logs`; `games_per_hour` is
    /// `--ladder-games-per-hour` (0: no cap).
    pub async fn start(logs: &MemoryLogs, games_per_hour: u32) -> LadderHost {
        let logs: MemoryLogs = (Arc::new(logs.0.reopened()), Arc::new(logs.1.reopened()));
        let settings = Settings {
            watcher_buffer: 256,
            keep_finished: Duration::from_secs(60),
            fill_timeout: Duration::from_secs(3600),
            idle_timeout: Duration::from_secs(86_400),
        };
        let registry = Registry::restore(logs.0.clone(), settings)
            .await
            .expect("the games rebuild");
        let games = GamesService::new(registry.clone(), None);
        let hosting = Hosting::new(1, 1 << 20, None);
        let (stop, stopped) = watch::channel(false);
        let ladders = LaddersService::restore(
            Logs {
                games: logs.0.clone(),
                ladders: logs.1.clone(),
            },
            games.clone(),
            Policy {
                open_registration: false,
                games_per_hour,
                submits_per_hour: 0,
            },
            hosting.clone(),
            stopped,
            None,
        )
        .await
        .expect("the ladders rebuild");
        LadderHost {
            registry,
            games: Arc::new(games),
            ladders,
            hosting,
            logs,
            stop: Arc::new(stop),
        }
    }

    /// A crash: the logs are cut (nothing from now on is durable, as for a process killed),
    /// then the incarnation's tasks are stopped so that its streams end (what they try to
    /// write is lost).
    pub async fn crash(self) {
        self.logs.0.cut();
        self.logs.1.cut();
        self.stop().await;
    }

    /// The server's shutdown path: the ladders stop, then every game actor.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        self.registry.close();
        // The stopped tasks end on their next poll.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
