//! From the wire to the engine: a [`Situation`] is everything a Gang of Four seat may know
//! now, read from one `pb::Update` (its view) plus the [`DealMemory`] the policy keeps of what
//! it saw earlier in the deal; [`Candidate`]s are the update's legal actions as engine moves,
//! each remembering the exact wire action to send back.

use gangs_games::gang_of_four::engine_options;
use gangs_proto::v1 as pb;
use gangs_rules::gang_of_four::{
    cards, Combination, DealState, Direction, Mask, Move, Options, Refusal,
};

use pb::gang_of_four_action::Kind as ActionKind;
use pb::gang_of_four_event::Kind as EventKind;
use pb::gang_of_four_view::Phase as ViewPhase;

/// What the seat may know about the deal in play, in engine terms.
#[derive(Clone, Debug)]
pub struct Situation {
    pub options: Options,
    pub seat: u8,
    pub hand: Mask,
    /// Cards held by each seat; with 3 players index 3 is the dead hand (16).
    pub counts: [u8; 4],
    /// Cumulative scores before this deal ends.
    pub scores: [u32; 4],
    pub direction: Direction,
    pub turn: u8,
    /// The combination to beat and who played it; `None` when the seat to act leads.
    pub table: Option<(Mask, u8)>,
    /// Passes in a row since the table combination was played.
    pub passes: u8,
    pub announced: u8,
    pub barred: u8,
    pub must_include: Mask,
    pub deal_number: u32,
    /// The exchange is under way and this seat gives a card back.
    pub give_back: bool,
    /// Cards played in the current trick (public, in the view).
    pub trick_cards: Mask,
    /// This deal's exchange: (from, to, card, automatic).
    pub exchange: Vec<(u8, u8, u8, bool)>,
}

fn mask_of(list: &[pb::GangOfFourCard]) -> Mask {
    list.iter()
        .filter(|c| c.id < 64)
        .fold(0, |m, c| m | (1u64 << c.id))
}

impl Situation {
    /// Reads the Gang of Four view of `update`; `None` for another game, a spectator or a
    /// view that names impossible seats.
    pub fn from_update(update: &pb::Update) -> Option<Situation> {
        let Some(pb::game_view::Game::GangOfFour(view)) =
            update.view.as_ref().and_then(|v| v.game.as_ref())
        else {
            return None;
        };
        let options = engine_options(view.options.as_ref()).ok()?;
        let players = options.players as usize;
        let seat = update.seat? as u8;
        if seat as usize >= players {
            return None;
        }
        let mut counts = [0u8; 4];
        let mut scores = [0u32; 4];
        let mut announced = 0u8;
        let mut barred = 0u8;
        for s in &view.seats {
            let i = s.seat as usize;
            if i >= players {
                return None;
            }
            counts[i] = s.card_count.min(17) as u8;
            scores[i] = s.score;
            if s.announced_last_card {
                announced |= 1 << i;
            }
            if s.barred {
                barred |= 1 << i;
            }
        }
        if players == 3 {
            counts[3] = 16;
        }
        let hand = mask_of(&view.hand);
        counts[seat as usize] = hand.count_ones() as u8;
        let direction = match pb::GangOfFourDirection::try_from(view.direction) {
            Ok(pb::GangOfFourDirection::Clockwise) => Direction::Clockwise,
            _ => Direction::CounterClockwise,
        };
        let table = view
            .table
            .as_ref()
            .map(|t| (mask_of(&t.cards), t.seat as u8));
        let passes = view.trick.iter().rev().take_while(|p| p.pass).count() as u8;
        let trick_cards = view
            .trick
            .iter()
            .filter(|p| !p.pass)
            .fold(0, |m, p| m | mask_of(&p.cards));
        let exchange = view
            .exchange
            .iter()
            .filter_map(|x| {
                let card = x.card.as_ref()?.id;
                (card < 64).then_some((x.from_seat as u8, x.to_seat as u8, card as u8, x.automatic))
            })
            .collect();
        Some(Situation {
            options,
            seat,
            hand,
            counts,
            scores,
            direction,
            turn: view.turn.unwrap_or(seat as u32) as u8,
            table,
            passes,
            announced,
            barred,
            must_include: if view.must_play_multicolor_one {
                1 << cards::MULTICOLOR_ONE
            } else {
                0
            },
            deal_number: view.deal_number,
            give_back: view.phase == ViewPhase::GiveBack as i32,
            trick_cards,
            exchange,
        })
    }

    pub fn players(&self) -> u8 {
        self.options.players
    }

    /// The seats other than this one that hold cards in play (not the dead hand).
    pub fn opponents(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.players()).filter(move |&s| s != self.seat)
    }

    /// The fewest cards any opponent holds.
    pub fn fewest_opponent_cards(&self) -> u8 {
        self.opponents()
            .map(|s| self.counts[s as usize])
            .min()
            .unwrap_or(16)
    }

    /// The seat that plays after `seat` in this deal's direction.
    pub fn next_seat(&self, seat: u8) -> u8 {
        let n = self.players();
        match self.direction {
            Direction::Clockwise => (seat + 1) % n,
            Direction::CounterClockwise => (seat + n - 1) % n,
        }
    }

    /// The table as a combination.
    pub fn table_combination(&self) -> Option<Combination> {
        self.table.and_then(|(m, _)| Combination::classify(m))
    }

    /// The engine state for a determinization (`hands` gives every seat's cards; this seat's
    /// must be its real hand).
    pub fn deal_state(&self, hands: [Mask; 4]) -> Result<DealState, Refusal> {
        let mut state = DealState::from_parts(
            self.options,
            hands,
            self.direction,
            self.turn,
            self.table,
            self.passes,
            self.announced,
            self.barred,
        )?;
        state.must_include = self.must_include;
        Ok(state)
    }
}

/// What a policy remembers of the current deal between its turns: the cards it has seen
/// played (from each view's trick and each update's events) and its own plays (cards gone
/// from its hand other than in the exchange: the trick that shows them may be won and
/// cleared before its next turn). After a reconnect it may have
/// missed some; then more cards look unseen than the other hands hold, and the sampler simply
/// leaves the surplus out, which is still consistent with everything public.
#[derive(Clone, Debug, Default)]
pub struct DealMemory {
    deal_number: u32,
    played: Mask,
    /// The hand at the previous turn of this deal.
    hand: Mask,
}

impl DealMemory {
    /// Takes in what `update` shows; forgets the previous deal when a new one started.
    pub fn observe(&mut self, update: &pb::Update, situation: &Situation) {
        if situation.deal_number != self.deal_number {
            self.deal_number = situation.deal_number;
            self.played = 0;
            self.hand = 0;
        }
        // Cards this seat gave in the exchange and did not get back.
        let mut given = 0u64;
        for &(from, to, card, _) in &situation.exchange {
            if from == situation.seat {
                given |= 1 << card;
            }
            if to == situation.seat {
                given &= !(1 << card);
            }
        }
        self.played |= situation.trick_cards | (self.hand & !situation.hand & !given);
        self.hand = situation.hand;
        for event in &update.events {
            if let Some(pb::game_event::Game::GangOfFour(e)) = &event.game {
                match &e.kind {
                    // A deal started within this update: what was played before belongs to
                    // the previous deal.
                    Some(EventKind::Dealt(_)) => self.played = situation.trick_cards,
                    Some(EventKind::Played(p)) => self.played |= mask_of(&p.cards),
                    _ => {}
                }
            }
        }
        // Never count a held card as played.
        self.played &= !situation.hand;
    }

    /// Cards seen played this deal.
    pub fn played(&self) -> Mask {
        self.played
    }
}

/// One legal action, as an engine move plus the wire action it came from.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub action: pb::GameAction,
    pub kind: CandidateKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CandidateKind {
    Play(Mask),
    Pass,
    GiveBack(u8),
}

impl Candidate {
    /// The engine move (plays always announce: the engine accepts the flag only where it
    /// matters, and the action list only holds flags it accepts).
    pub fn engine_move(&self) -> Option<Move> {
        match self.kind {
            CandidateKind::Play(cards) => Some(Move::Play {
                cards,
                announce: true,
            }),
            CandidateKind::Pass => Some(Move::Pass),
            CandidateKind::GiveBack(_) => None,
        }
    }
}

/// The update's legal Gang of Four actions. Under `manual_last_card` a play that leaves one
/// card is listed with and without the announcement; only the announcing one is kept (never
/// forgetting "Card!" costs nothing).
pub fn candidates(update: &pb::Update) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::with_capacity(update.legal_actions.len());
    for action in &update.legal_actions {
        let Some(pb::game_action::Game::GangOfFour(a)) = &action.game else {
            continue;
        };
        let (kind, announce) = match &a.kind {
            Some(ActionKind::Play(p)) => {
                let mask = p
                    .card_ids
                    .iter()
                    .filter(|&&id| id < 64)
                    .fold(0u64, |m, &id| m | (1 << id));
                (CandidateKind::Play(mask), p.announce_last_card)
            }
            Some(ActionKind::Pass(_)) => (CandidateKind::Pass, false),
            Some(ActionKind::GiveBack(g)) => match g.card_id {
                Some(id) if id < 64 => (CandidateKind::GiveBack(id as u8), false),
                _ => continue,
            },
            None => continue,
        };
        match out.iter_mut().find(|c| c.kind == kind) {
            Some(existing) => {
                if announce {
                    existing.action = action.clone();
                }
            }
            None => out.push(Candidate {
                action: action.clone(),
                kind,
            }),
        }
    }
    out
}
