//! Who may call what. Every method of `gangs.v1.Games` and `gangs.v1.Ladders` is declared here
//! once, with its [`Rule`] ([`RULES`]; a test reads the methods from the proto's descriptors and
//! fails on one without a rule), and [`Front::admit`] turns a call's credentials into the
//! [`Principal`] its handler serves. Health and reflection stay open (they are not listed).
//!
//! Credentials are `authorization: Bearer KEY` metadata: the admin key (`--api-key`), the
//! player key (`--player-key`) or a ladder's bot key. A server without `--api-key` has no keys:
//! everyone may call everything (Queue still asks for the bot's key in its request).

use super::bots::{BotGrants, BotKey};
use crate::bounds::Bounded;
use crate::cluster::Cluster;
use crate::error::HostError;
use crate::secret::constant_time_eq;
use std::sync::Arc;
use tonic::{Request, Status};

/// The server's keys (`--api-key`, `--player-key`); none: every call is allowed.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    /// May do everything.
    pub admin: Option<String>,
    /// May join, watch, act, read logs and list games; not create or cancel.
    pub player: Option<String>,
}

/// Who may call a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The admin key.
    Admin,
    /// The player key or the admin key.
    Player,
    /// The player key, the admin key, or a ladder bot's key on the games its ladder matched it
    /// to (with its own seats' tokens, or as a spectator).
    PlayerOrBot,
    /// The admin key; anyone with `--open-registration`.
    Registration,
    /// Anyone: the request carries the bot's own key (`QueueRequest.bot_key`), which its ladder
    /// checks.
    BotKeyInRequest,
    /// The admin key, or a ladder bot's key (for its own bot: the ladder checks which, by
    /// `ladder::hosted::owns`); with `--open-registration`, anyone without a key (SubmitBot of
    /// a new bot; the ladder refuses such a caller a bot's log).
    BotOwner,
}

/// One method of either service and who may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// `gangs.v1.Games` or `gangs.v1.Ladders`.
    pub service: &'static str,
    /// As the proto spells it (`CreateGame`).
    pub name: &'static str,
    pub rule: Rule,
    /// What the method does, for refusals ("this server requires a key to {what}").
    pub what: &'static str,
}

pub const GAMES: &str = "gangs.v1.Games";
pub const LADDERS: &str = "gangs.v1.Ladders";

macro_rules! methods {
    ($($constant:ident: $service:ident $name:literal $rule:ident $what:literal;)*) => {
        $(pub const $constant: Method = Method {
            service: $service,
            name: $name,
            rule: Rule::$rule,
            what: $what,
        };)*
        /// Every method of both services, each with its rule.
        pub const RULES: &[Method] = &[$($constant),*];
    };
}

methods! {
    CREATE_GAME: GAMES "CreateGame" Admin "create games";
    JOIN_GAME: GAMES "JoinGame" Player "join games";
    WATCH: GAMES "Watch" PlayerOrBot "watch games";
    ACT: GAMES "Act" PlayerOrBot "act";
    GET_LOG: GAMES "GetLog" PlayerOrBot "read logs";
    LIST_GAMES: GAMES "ListGames" Player "list games";
    IMPORT_GAME: GAMES "ImportGame" Admin "import games";
    CANCEL_GAME: GAMES "CancelGame" Admin "cancel games";
    WATCH_GAMES: GAMES "WatchGames" Player "watch the directory";
    CREATE_LADDER: LADDERS "CreateLadder" Admin "create ladders";
    LIST_LADDERS: LADDERS "ListLadders" Player "list ladders";
    REGISTER_BOT: LADDERS "RegisterBot" Registration "register bots";
    QUEUE: LADDERS "Queue" BotKeyInRequest "queue on a ladder";
    STANDINGS: LADDERS "Standings" Player "read standings";
    LADDER_GAMES: LADDERS "LadderGames" Player "list ladder games";
    PAUSE_BOT: LADDERS "PauseBot" Admin "pause bots";
    RETIRE_BOT: LADDERS "RetireBot" Admin "retire bots";
    RERATE_LADDER: LADDERS "RerateLadder" Admin "rerate ladders";
    DELETE_LADDER: LADDERS "DeleteLadder" Admin "delete ladders";
    RENAME_LADDER: LADDERS "RenameLadder" Admin "rename ladders";
    REKEY_BOT: LADDERS "RekeyBot" Admin "give bots new keys";
    SET_SEASON: LADDERS "SetSeason" Admin "end or plan seasons";
    BOT_REPORT: LADDERS "BotReport" Player "read a bot's report";
    SUBMIT_BOT: LADDERS "SubmitBot" BotOwner "submit hosted bots";
    GET_BOT_LOG: LADDERS "GetBotLog" BotOwner "read a hosted bot's log";
}

/// The caller of a method, once [`Front::admit`] accepted its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A server without keys (everyone may call everything), or a method whose request carries
    /// its own key (Queue).
    Anyone,
    /// The admin key.
    Admin,
    /// The player key.
    Player,
    /// A ladder bot's key: the games its ladder matched it to, nothing else.
    Bot(BotKey),
    /// The ladder NAME, in-process (given to the host's typed API, `GamesService::create_game_as`
    /// and the others): it creates, seats, watches and acts in its own games.
    Ladder(String),
    /// A call another node of this cluster forwarded (it carries the cluster's forwarding
    /// mark), on a server with keys or without: that node admitted its caller for this method
    /// and game, which is not checked twice (a bot key, for one, is known on the node that runs
    /// its ladder), and the call is never forwarded again.
    Forwarded,
}

/// The keys and the bot keys every call is checked against. Cheap to clone.
#[derive(Clone, Default)]
pub struct Front {
    keys: Keys,
    /// Set on a node of a cluster: calls with its forwarding mark were admitted already.
    cluster: Option<Arc<Cluster>>,
    bots: BotGrants,
    /// `--open-registration`: RegisterBot needs no key.
    open_registration: bool,
    /// The last refusal of each seat's calls for its credentials.
    refusals: super::Refusals,
}

impl Front {
    pub fn new(keys: Keys) -> Front {
        Front {
            keys,
            ..Front::default()
        }
    }

    /// A node of `cluster`: calls other nodes forward were admitted there.
    pub fn with_cluster(mut self, cluster: Arc<Cluster>) -> Front {
        self.cluster = Some(cluster);
        self
    }

    /// This front with `--open-registration` as given.
    pub fn with_open_registration(mut self, open: bool) -> Front {
        self.open_registration = open;
        self
    }

    /// What every ladder's bot key may do, shared with the ladders that keep it.
    pub fn bots(&self) -> &BotGrants {
        &self.bots
    }

    /// The last refusal of each seat's calls for its credentials (Watch, Act).
    pub fn refusals(&self) -> &super::Refusals {
        &self.refusals
    }

    /// Whether the server has keys (`--api-key`).
    pub fn keyed(&self) -> bool {
        self.keys.admin.is_some()
    }

    /// Whether `key` is one of this server's keys: the admin key, the player key or a ladder
    /// bot's key (a retired bot's included: its refusal says why). What it may call is
    /// [`Front::admit`]'s to decide.
    pub fn knows(&self, key: &str) -> bool {
        let is = |k: &Option<String>| {
            k.as_ref()
                .is_some_and(|k| constant_time_eq(key.as_bytes(), k.as_bytes()))
        };
        is(&self.keys.admin) || is(&self.keys.player) || self.bot_of(key).is_some()
    }

    /// The ladder bot whose key is `key`: from the ladders this node runs, else (on a cluster)
    /// as the node running its ladder published it.
    fn bot_of(&self, key: &str) -> Option<BotKey> {
        if let Some(bot) = self.bots.bot_of(key) {
            return Some(bot);
        }
        let cluster = self.cluster.as_ref()?;
        let hash = crate::secret::sha256_hex(key);
        let published = cluster.bot_key(&hash)?;
        Some(BotKey {
            hash,
            ladder: published.ladder.into(),
            bot: published.bot.into(),
            retired: published.retired,
        })
    }

    /// The cluster this node is part of, if any (the ladders publish their bots' keys there).
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// The caller of `method` by the call's `authorization` metadata, or the refusal: no key
    /// (UNAUTHENTICATED), a key that may not call it or that nobody knows (PERMISSION_DENIED).
    /// A bot key is admitted here as its bot; which games it may touch is the game's call's
    /// to check ([`BotGrants::may_play`]).
    pub fn admit<T>(&self, request: &Request<T>, method: &Method) -> Result<Principal, Status> {
        if self
            .cluster
            .as_ref()
            .is_some_and(|cluster| cluster.was_forwarded(request.metadata()))
        {
            return Ok(Principal::Forwarded);
        }
        self.admit_key(bearer(request)?, method)
    }

    /// The principal of an in-process caller that reads with `key` (the web viewer's logged-in
    /// key, or the server's read key), for `method`: the key's own rights, refused as a gRPC
    /// call with that key would be. Given to the host's typed API (`GamesService::watch_as`…).
    pub fn principal_of(&self, key: Option<&str>, method: &Method) -> Result<Principal, HostError> {
        Ok(self.admit_key(key, method)?)
    }

    /// The principal of the web viewer's reader `key` for `method` (`BotReport`, or
    /// `LadderGames` filtered to one bot) on the page of bot `bot` (`(name, version)`, an empty
    /// version: "1"; None: the whole ladder) of ladder `ladder`: the key's own rights
    /// ([`Front::principal_of`]), and a ladder bot's key besides on its own bot's page (only
    /// there: another bot's page, or the whole ladder, is refused naming the key's bot).
    pub fn principal_of_bot_page(
        &self,
        key: Option<&str>,
        method: &Method,
        ladder: &str,
        bot: Option<(&str, &str)>,
    ) -> Result<Principal, HostError> {
        let own = match self.own_rights_or_bot(key, method)? {
            Ok(principal) => return Ok(principal),
            Err(own) => own,
        };
        if own.retired {
            return Err(super::bots::retired(&own.bot, &own.ladder).into());
        }
        let asked = bot.map(|(name, version)| {
            let version = if version.is_empty() { "1" } else { version };
            format!("{name}@{version}")
        });
        if *own.ladder == *ladder && asked.as_deref() == Some(&*own.bot) {
            return Ok(Principal::Bot(own));
        }
        let asked = match asked {
            Some(asked) => format!("the page of {asked} on ladder {ladder}"),
            None => format!("ladder {ladder}'s games of every bot"),
        };
        Err(Status::permission_denied(format!(
            "a bot key reads only its own bot's page (this key is {} of ladder {}): it may not read {asked}",
            own.bot, own.ladder
        ))
        .into())
    }

    /// The web viewer's reader `key` for `method`: `Ok(Ok(principal))` when the key's own
    /// rights admit it ([`Front::principal_of`]), `Ok(Err(bot))` when they do not but it is a
    /// ladder bot's key (the caller judges what that bot may read), the refusal otherwise.
    fn own_rights_or_bot(
        &self,
        key: Option<&str>,
        method: &Method,
    ) -> Result<Result<Principal, BotKey>, HostError> {
        let refused = match self.admit_key(key, method) {
            Ok(principal) => return Ok(Ok(principal)),
            Err(refused) => refused,
        };
        match key.and_then(|key| self.bot_of(key)) {
            Some(own) => Ok(Err(own)),
            None => Err(refused.into()),
        }
    }

    /// The principal of the web viewer's reader `key` for `method` (`ListGames`, looking up
    /// the summary of game `game_id` alone): the key's own rights ([`Front::principal_of`]),
    /// and a ladder bot's key besides on a game its ladder matched it to ([`Front::may_play`],
    /// as a spectator: the games its own bot's page lists).
    pub async fn principal_of_game(
        &self,
        key: Option<&str>,
        method: &Method,
        game_id: &str,
    ) -> Result<Principal, HostError> {
        let own = match self.own_rights_or_bot(key, method)? {
            Ok(principal) => return Ok(principal),
            Err(own) => own,
        };
        let principal = Principal::Bot(own);
        self.may_play(&principal, game_id, "").await?;
        Ok(principal)
    }

    /// The caller of `method` sending `given` as its key.
    fn admit_key(&self, given: Option<&str>, method: &Method) -> Result<Principal, Status> {
        let Some(admin) = &self.keys.admin else {
            return Ok(Principal::Anyone);
        };
        let what = method.what;
        match method.rule {
            Rule::BotKeyInRequest => return Ok(Principal::Anyone),
            Rule::Registration if self.open_registration => return Ok(Principal::Anyone),
            _ => {}
        }
        if method.rule == Rule::BotOwner && given.is_none() && self.open_registration {
            return Ok(Principal::Anyone);
        }
        let Some(given) = given else {
            return Err(Status::unauthenticated(format!(
                "this server requires a key to {what}: send `authorization: Bearer KEY` metadata (the gangs CLI and the bots send --api-key or GANGS_API_KEY; a ladder bot may send its --bot-key)"
            )));
        };
        if constant_time_eq(given.as_bytes(), admin.as_bytes()) {
            return Ok(Principal::Admin);
        }
        let player = self.keys.player.as_ref();
        if player.is_some_and(|p| constant_time_eq(given.as_bytes(), p.as_bytes())) {
            return match method.rule {
                Rule::Player | Rule::PlayerOrBot => Ok(Principal::Player),
                Rule::BotOwner => Err(Status::permission_denied(format!(
                    "the player key may not {what}: that needs the admin key (--api-key) or a key of the bot's own (--bot-key)"
                ))),
                _ => Err(Status::permission_denied(format!(
                    "the player key may not {what}: that needs the admin key (--api-key)"
                ))),
            };
        }
        if let Some(bot) = self.bot_of(given) {
            if bot.retired {
                return Err(super::bots::retired(&bot.bot, &bot.ladder));
            }
            return match method.rule {
                Rule::PlayerOrBot | Rule::BotOwner => Ok(Principal::Bot(bot)),
                _ => Err(Status::permission_denied(format!(
                    "a bot key plays only its ladder games (Watch, Act and GetLog of the games ladder {} matched {} to): it may not {what}",
                    bot.ladder, bot.bot
                ))),
            };
        }
        Err(Status::permission_denied(format!(
            "wrong key: this server does not know the key sent in `authorization` (to {what})"
        )))
    }

    /// The front of every call: its caller ([`Front::admit`]), then its request's bounds
    /// (`bounds.rs`), checked once before anything else reads it.
    pub fn accept<T: Bounded>(
        &self,
        request: &Request<T>,
        method: &Method,
    ) -> Result<Principal, Status> {
        let principal = self.admit(request, method)?;
        request.get_ref().check_bounds()?;
        Ok(principal)
    }

    /// Whether `principal` may touch game `game_id`, with seat token `token` (empty: as a
    /// spectator). Every principal but a bot's may; a bot only its ladder's games: by the
    /// table of its ladder here, or (its ladder run by another node of the cluster) by the
    /// game's seating that node published.
    pub async fn may_play(
        &self,
        principal: &Principal,
        game_id: &str,
        token: &str,
    ) -> Result<(), Status> {
        let Principal::Bot(bot) = principal else {
            return Ok(());
        };
        match &self.cluster {
            Some(cluster) if !self.bots.keeps(&bot.hash) => {
                // Boxed: a KV read is a large future, and every call's future would be as large.
                let seating = Box::pin(cluster.bot_game(game_id)).await?;
                super::bots::may_play_published(bot, game_id, token, seating.as_ref())
            }
            _ => self.bots.may_play(bot, game_id, token),
        }
    }
}

/// The key in a call's `authorization: Bearer KEY` metadata: `Ok(None)` without that
/// metadata, an error when it does not read `Bearer KEY`.
pub fn bearer<T>(request: &Request<T>) -> Result<Option<&str>, Status> {
    let Some(header) = request.metadata().get("authorization") else {
        return Ok(None);
    };
    header
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(Some)
        .ok_or_else(|| {
            Status::unauthenticated("the `authorization` metadata must read `Bearer KEY`")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    // Just what the test reads of `google.protobuf.FileDescriptorSet` (prost skips the rest).
    #[derive(Clone, PartialEq, Message)]
    struct FileSet {
        #[prost(message, repeated, tag = "1")]
        file: Vec<File>,
    }
    #[derive(Clone, PartialEq, Message)]
    struct File {
        #[prost(string, optional, tag = "2")]
        package: Option<String>,
        #[prost(message, repeated, tag = "6")]
        service: Vec<Service>,
    }
    #[derive(Clone, PartialEq, Message)]
    struct Service {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
        #[prost(message, repeated, tag = "2")]
        method: Vec<MethodDescriptor>,
    }
    #[derive(Clone, PartialEq, Message)]
    struct MethodDescriptor {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
    }

    /// The rule of `service`'s method `name`, if it has one.
    fn rule_of(service: &str, name: &str) -> Option<&'static Method> {
        RULES
            .iter()
            .find(|m| m.service == service && m.name == name)
    }

    /// Every (service, method) of the compiled proto.
    fn proto_methods() -> Vec<(String, String)> {
        let set = FileSet::decode(gangs_proto::FILE_DESCRIPTOR_SET).expect("descriptors");
        let mut methods = Vec::new();
        for file in set.file {
            let package = file.package.unwrap_or_default();
            for service in file.service {
                let service_name = format!("{package}.{}", service.name.unwrap_or_default());
                for method in service.method {
                    methods.push((service_name.clone(), method.name.unwrap_or_default()));
                }
            }
        }
        methods
    }

    #[test]
    fn every_method_of_both_services_has_an_access_rule() {
        let methods = proto_methods();
        for service in [GAMES, LADDERS] {
            assert!(
                methods.iter().any(|(s, _)| s == service),
                "the descriptors hold no {service}: {methods:?}"
            );
        }
        for (service, name) in &methods {
            assert!(
                rule_of(service, name).is_some(),
                "{service}/{name} has no access rule in front/access.rs"
            );
        }
        // And no rule names a method the proto does not have.
        for rule in RULES {
            assert!(
                methods
                    .iter()
                    .any(|(s, n)| s == rule.service && n == rule.name),
                "{}/{} is not a method of the proto",
                rule.service,
                rule.name
            );
        }
    }

    fn call(key: Option<&str>) -> Request<()> {
        let mut request = Request::new(());
        if let Some(key) = key {
            let value = format!("Bearer {key}").parse().expect("ascii");
            request.metadata_mut().insert("authorization", value);
        }
        request
    }

    fn keyed() -> Front {
        Front::new(Keys {
            admin: Some("ADMIN".into()),
            player: Some("PLAYERS".into()),
        })
    }

    #[tokio::test]
    async fn keys_make_their_principals_and_a_bot_key_plays_only_its_games() {
        let front = keyed();
        front.bots().enter(
            &crate::secret::sha256_hex("BOTKEY"),
            "class",
            "greedy@1",
            false,
        );
        let hash = crate::secret::sha256_hex("BOTKEY");
        front
            .bots()
            .grant_game(&hash, "g1", Some(vec!["tok0".into()]));
        assert_eq!(
            front.admit(&call(Some("ADMIN")), &CREATE_GAME).ok(),
            Some(Principal::Admin)
        );
        let refused = front
            .admit(&call(Some("PLAYERS")), &CREATE_GAME)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied);
        assert_eq!(
            front.admit(&call(None), &WATCH).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        for method in [CREATE_GAME, JOIN_GAME, LIST_GAMES, WATCH_GAMES, IMPORT_GAME] {
            let refused = front.admit(&call(Some("BOTKEY")), &method).unwrap_err();
            assert_eq!(refused.code(), tonic::Code::PermissionDenied);
            assert!(
                refused.message().contains("plays only its ladder games"),
                "{refused:?}"
            );
        }
        let bot = front.admit(&call(Some("BOTKEY")), &WATCH).unwrap();
        assert!(matches!(bot, Principal::Bot(_)));
        assert!(front.may_play(&bot, "g1", "tok0").await.is_ok());
        assert!(front.may_play(&bot, "g1", "").await.is_ok());
        let other_seat = front.may_play(&bot, "g1", "tok1").await.unwrap_err();
        assert_eq!(other_seat.code(), tonic::Code::PermissionDenied);
        let other_game = front.may_play(&bot, "g2", "").await.unwrap_err();
        assert_eq!(other_game.code(), tonic::Code::PermissionDenied);
        assert!(other_game.message().contains("g2"), "{other_game:?}");
        front.bots().retire(&hash);
        let retired = front.admit(&call(Some("BOTKEY")), &WATCH).unwrap_err();
        assert_eq!(retired.code(), tonic::Code::PermissionDenied);
        assert!(retired.message().contains("retired"), "{retired:?}");
        // In-process callers carry no header: the viewer reads with its key's rights.
        assert_eq!(
            front.principal_of(Some("PLAYERS"), &WATCH).ok(),
            Some(Principal::Player)
        );
        let refused = front
            .principal_of(Some("PLAYERS"), &CREATE_GAME)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied);
        // The viewer: a bot key reads its own bot's page and games, nothing else.
        let key = Some("BOTKEY2");
        let hash2 = crate::secret::sha256_hex("BOTKEY2");
        front.bots().enter(&hash2, "class", "alice@2", false);
        front.bots().grant_game(&hash2, "g7", None);
        let own = front
            .principal_of_bot_page(key, &BOT_REPORT, "class", Some(("alice", "2")))
            .unwrap();
        assert!(matches!(own, Principal::Bot(_)));
        for (ladder, bot) in [
            ("class", Some(("bob", "1"))),
            ("class", Some(("alice", ""))),
            ("other", Some(("alice", "2"))),
            ("class", None),
        ] {
            let refused = front
                .principal_of_bot_page(key, &LADDER_GAMES, ladder, bot)
                .unwrap_err();
            assert_eq!(refused.code(), tonic::Code::PermissionDenied);
            assert!(
                refused
                    .message()
                    .contains("a bot key reads only its own bot's page (this key is alice@2"),
                "{refused:?}"
            );
        }
        assert_eq!(
            front
                .principal_of_bot_page(Some("PLAYERS"), &BOT_REPORT, "class", None)
                .ok(),
            Some(Principal::Player)
        );
        assert_eq!(
            front
                .principal_of_bot_page(None, &BOT_REPORT, "class", None)
                .unwrap_err()
                .code(),
            tonic::Code::Unauthenticated
        );
        assert!(matches!(
            front.principal_of_game(key, &LIST_GAMES, "g7").await,
            Ok(Principal::Bot(_))
        ));
        let other = front
            .principal_of_game(key, &LIST_GAMES, "g1")
            .await
            .unwrap_err();
        assert_eq!(other.code(), tonic::Code::PermissionDenied);
        assert!(other.message().contains("did not match"), "{other:?}");
        front.bots().retire(&hash2);
        let retired = front
            .principal_of_bot_page(key, &BOT_REPORT, "class", Some(("alice", "2")))
            .unwrap_err();
        assert!(retired.message().contains("retired"), "{retired:?}");
        // An open server asks no key, a bot key included.
        let open = Front::default();
        assert_eq!(
            open.admit(&call(Some("BOTKEY")), &CREATE_GAME).ok(),
            Some(Principal::Anyone)
        );
    }
}
