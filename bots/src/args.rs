//! The flags every bot binary accepts. A bot with flags of its own flattens [`BotArgs`] into its
//! own clap struct (`#[command(flatten)] common: BotArgs`).

use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Where to play and as whom.
#[derive(Debug, Clone, Args)]
pub struct BotArgs {
    /// The gangs server to connect to.
    #[arg(long, env = "GANGS_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,

    /// For an `https://` server: a PEM file of the certificate(s) to trust (its self-signed
    /// certificate or a private CA); without it the system's roots.
    #[arg(long, env = "GANGS_CA")]
    pub ca: Option<std::path::PathBuf>,

    /// The id of the game to join (see `gangs games`); or play a ladder's games (--ladder).
    #[arg(long, required_unless_present = "ladder", conflicts_with = "ladder")]
    pub game: Option<String>,

    /// The seat to take; omitted: the first free seat.
    #[arg(long)]
    pub seat: Option<u32>,

    /// The player name shown to others; omitted: the bot's own name.
    #[arg(long)]
    pub name: Option<String>,

    /// Resume a seat joined earlier (its seat token) instead of joining.
    #[arg(long)]
    pub token: Option<String>,

    /// Set by the ladder loop: `token` is the seat a ladder just took for this bot (a new
    /// game, not a seat being resumed).
    #[arg(skip)]
    pub matched: bool,

    /// The seat's invitation, for a game created with reserved seats (it decides the seat).
    #[arg(long)]
    pub invitation: Option<String>,

    /// The key of a server started with --api-key/--player-key, sent with every call.
    #[arg(long, env = "GANGS_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,

    /// Seed of the policy's random number generator; omitted: a random seed (logged).
    #[arg(long)]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub ladder: LadderFlags,

    /// Log only warnings and errors (RUST_LOG still wins). The arena asks for this through
    /// the environment (GANGS_BOT_QUIET=1), never with a flag (bot contract, docs/bots.md).
    #[arg(
        long,
        env = "GANGS_BOT_QUIET",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub quiet: bool,
}

/// Playing a ladder instead of one game: queue with the bot's key, play every game the server
/// matches, several at once.
#[derive(Debug, Clone, Default, Args)]
pub struct LadderFlags {
    /// Play this ladder's games (`gangs ladder list`) instead of one game; needs --bot-key.
    #[arg(long, requires = "bot_key")]
    pub ladder: Option<String>,

    /// The bot key `gangs ladder register` printed for this bot: it queues, and (sent as
    /// `authorization: Bearer KEY` without --api-key) watches and acts in the bot's ladder games.
    #[arg(long, requires = "ladder")]
    pub bot_key: Option<String>,

    /// Stop after this many ladder games are over (omitted: play on forever).
    #[arg(long, requires = "ladder")]
    pub games: Option<u32>,

    /// Ladder games played at once (the server caps it).
    #[arg(long, default_value_t = 1, requires = "ladder")]
    pub concurrent: u32,
}

impl BotArgs {
    /// The seed for the policy: `--seed`, else a fresh random one, which is then kept in
    /// `self.seed` so that [`crate::run_bot`] logs it and the game can be reproduced.
    pub fn seed(&mut self) -> u64 {
        *self.seed.get_or_insert_with(rand::random)
    }

    /// A deterministic RNG for the policy, from [`BotArgs::seed`].
    pub fn rng(&mut self) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(self.seed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bot: BotArgs,
    }

    #[test]
    fn defaults_and_flags() {
        let cli = Cli::try_parse_from(["bot", "--game", "g1"]).unwrap();
        assert_eq!(cli.bot.game.as_deref(), Some("g1"));
        assert!(cli.bot.ladder.ladder.is_none());
        assert_eq!(cli.bot.seat, None);
        assert!(cli.bot.server.starts_with("http://"));

        let cli = Cli::try_parse_from([
            "bot",
            "--game",
            "g1",
            "--seat",
            "2",
            "--seed",
            "7",
            "--name",
            "zed",
            "--quiet",
            "--invitation",
            "inv",
            "--api-key",
            "k",
        ])
        .unwrap();
        assert_eq!(cli.bot.invitation.as_deref(), Some("inv"));
        assert_eq!(cli.bot.api_key.as_deref(), Some("k"));
        assert_eq!(cli.bot.seat, Some(2));
        assert_eq!(cli.bot.seed, Some(7));
        assert_eq!(cli.bot.name.as_deref(), Some("zed"));
        assert!(cli.bot.quiet);
    }

    #[test]
    fn quiet_also_from_the_environment_as_the_arena_asks() {
        // The only test that sets GANGS_BOT_QUIET; the others do not look at `quiet` unset.
        std::env::set_var("GANGS_BOT_QUIET", "1");
        let quiet = Cli::try_parse_from(["bot", "--game", "g"])
            .unwrap()
            .bot
            .quiet;
        std::env::set_var("GANGS_BOT_QUIET", "0");
        let loud = Cli::try_parse_from(["bot", "--game", "g"])
            .unwrap()
            .bot
            .quiet;
        std::env::remove_var("GANGS_BOT_QUIET");
        assert!(quiet);
        assert!(!loud);
    }

    #[test]
    fn game_is_required() {
        assert!(Cli::try_parse_from(["bot"]).is_err());
    }

    #[test]
    fn a_ladder_instead_of_a_game() {
        let cli = Cli::try_parse_from([
            "bot",
            "--ladder",
            "class",
            "--bot-key",
            "k",
            "--games",
            "20",
            "--concurrent",
            "3",
        ])
        .unwrap();
        let ladder = cli.bot.ladder;
        assert_eq!(ladder.ladder.as_deref(), Some("class"));
        assert_eq!(ladder.bot_key.as_deref(), Some("k"));
        assert_eq!((ladder.games, ladder.concurrent), (Some(20), 3));
        // A ladder needs its key, and is not a game.
        assert!(Cli::try_parse_from(["bot", "--ladder", "class"]).is_err());
        assert!(
            Cli::try_parse_from(["bot", "--ladder", "c", "--bot-key", "k", "--game", "g"]).is_err()
        );
    }

    #[test]
    fn same_seed_same_rng() {
        use rand::Rng;
        let mut cli = Cli::try_parse_from(["bot", "--game", "g", "--seed", "42"]).unwrap();
        let a: u64 = cli.bot.rng().random();
        let b: u64 = cli.bot.rng().random();
        assert_eq!(a, b);
        assert_eq!(cli.bot.seed(), 42);
    }

    #[test]
    fn a_random_seed_is_kept() {
        let mut cli = Cli::try_parse_from(["bot", "--game", "g"]).unwrap();
        let seed = cli.bot.seed();
        assert_eq!(cli.bot.seed, Some(seed));
        assert_eq!(cli.bot.seed(), seed);
    }
}
