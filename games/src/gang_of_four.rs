//! PLACEHOLDER until the gang_of_four engine lands: refuses to create games.
use crate::RuleError;
use gangs_proto::v1 as pb;

pub const ACTION_HELP: &str = "";

pub struct GangOfFourGame;

impl GangOfFourGame {
    pub fn new(
        _options: Option<&pb::GangOfFourOptions>,
        _seed: u64,
        _preset: Option<&pb::GangOfFourPreset>,
    ) -> Result<Self, RuleError> {
        Err(RuleError::invalid("gang_of_four is not implemented yet"))
    }
}

impl crate::Game for GangOfFourGame {
    fn kind(&self) -> &'static str { unreachable!() }
    fn players(&self) -> usize { unreachable!() }
    fn options(&self) -> pb::GameOptions { unreachable!() }
    fn start(&mut self) -> Vec<pb::GameEvent> { unreachable!() }
    fn act(&mut self, _seat: usize, _action: &pb::GameAction) -> Result<Vec<pb::GameEvent>, RuleError> { unreachable!() }
    fn phase_deadline_ms(&self) -> Option<u64> { unreachable!() }
    fn phase_id(&self) -> u64 { unreachable!() }
    fn expire(&mut self) -> Result<Vec<pb::GameEvent>, RuleError> { unreachable!() }
    fn view(&self, _seat: Option<usize>) -> pb::GameView { unreachable!() }
    fn redact(&self, _event: &pb::GameEvent, _seat: Option<usize>) -> Option<pb::GameEvent> { unreachable!() }
    fn legal_actions(&self, _seat: usize) -> Vec<pb::GameAction> { unreachable!() }
    fn is_over(&self) -> bool { unreachable!() }
    fn outcome(&self) -> Option<pb::Outcome> { unreachable!() }
}

pub fn parse_options(_players: Option<u32>, _pairs: &[(String, String)]) -> Result<pb::GangOfFourOptions, RuleError> {
    Err(RuleError::invalid("gang_of_four is not implemented yet"))
}
pub fn parse_action(_words: &[String]) -> Result<pb::GameAction, RuleError> {
    Err(RuleError::invalid("gang_of_four is not implemented yet"))
}
pub fn describe_action(_a: &pb::GangOfFourAction) -> String { String::new() }
pub fn describe_event(_e: &pb::GangOfFourEvent) -> String { String::new() }
pub fn render_view(_v: &pb::GangOfFourView) -> String { String::new() }
