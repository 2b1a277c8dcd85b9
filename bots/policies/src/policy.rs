//! The one thing a bot decides: which legal action to play.

use gangs_proto::v1 as pb;

/// A bot's brain. The runner calls [`Policy::choose`] with the newest update of the bot's seat
/// whenever it lists legal actions. Such an update always carries the complete current view
/// (the runner watches with views only when needed, and an update with legal actions needs
/// it), so a policy needs no memory of its own (it may keep some).
pub trait Policy {
    /// The name the bot joins with unless `--name` is given.
    fn name(&self) -> &str;

    /// One of `update.legal_actions` (never anything else: the runner stops loudly if so), or
    /// `None` to let the moment pass (wait for the next update).
    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction>;
}

/// A boxed policy is a policy: what [`crate::by_name`] makes, for the bot binaries
/// and the ladder's house bots.
impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn choose(&mut self, update: &pb::Update) -> Option<pb::GameAction> {
        (**self).choose(update)
    }
}
