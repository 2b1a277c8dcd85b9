//! Every specialist card in one place: the automatic ones right after the deal (Swindler,
//! Shareholder, Numbers genius, and the Coordinator's simultaneous choice), the proposed ones
//! (proposal, votes, their effect), the choices an accepted use waits for (Informant show,
//! Hacker and Valet discard) and the list of uses a seat may propose.

use super::{PendingChoice, Proposal, Stage, TheGang};
use crate::the_gang::cards::Card;
use crate::the_gang::challenges::{card_points, is_face, Announcement, Specialist, SpecialistUse};
use crate::the_gang::evaluator::evaluate;
use crate::the_gang::{Event, Refusal};
use rand::seq::SliceRandom;

impl TheGang {
    /// Automatic specialists (3, 6, 8, 9), then the first chip phase.
    pub(super) fn after_deal(&mut self, events: &mut Vec<Event>) {
        match self.heist.specialist {
            Some(Specialist::Swindler) => {
                let players = self.config.players;
                let old = self.heist.private.clone();
                let mut gathered: Vec<Card> = old.iter().flatten().copied().collect();
                gathered.shuffle(&mut self.rng);
                let mut it = gathered.into_iter();
                for (seat, old_hand) in old.iter().enumerate().take(players) {
                    let new: Vec<Card> = it.by_ref().take(old_hand.len()).collect();
                    self.heist.remembered[seat]
                        .extend(old_hand.iter().filter(|c| !new.contains(c)));
                    self.heist.private[seat] = new.clone();
                    events.push(Event::Swindled {
                        seat,
                        old: old_hand.clone(),
                        new,
                    });
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::Shareholder) => {
                for seat in 0..self.config.players {
                    let count = self.heist.private[seat]
                        .iter()
                        .filter(|&&c| is_face(c))
                        .count();
                    self.announce(
                        seat,
                        Specialist::Shareholder,
                        Announcement::FaceCards(count as u32),
                        events,
                    );
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::NumbersGenius) => {
                for seat in 0..self.config.players {
                    let sum = self.heist.private[seat]
                        .iter()
                        .map(|&c| card_points(c))
                        .sum();
                    self.announce(
                        seat,
                        Specialist::NumbersGenius,
                        Announcement::CardSum(sum),
                        events,
                    );
                }
                self.heist.specialist_used = true;
            }
            Some(Specialist::Coordinator) => {
                self.stage = Stage::Coordinating;
                return;
            }
            _ => {}
        }
        self.open_first_street(events);
    }

    fn announce(
        &mut self,
        seat: usize,
        specialist: Specialist,
        announcement: Announcement,
        events: &mut Vec<Event>,
    ) {
        self.heist
            .announcements
            .push((seat, specialist, announcement));
        events.push(Event::Announced {
            seat,
            specialist,
            announcement,
        });
    }

    pub(super) fn check_propose(&self, seat: usize, use_: SpecialistUse) -> Result<(), Refusal> {
        let h = &self.heist;
        let Some(specialist) = h.specialist else {
            return Err(Refusal::not_now("no specialist card is active"));
        };
        if use_.specialist() != specialist {
            return Err(Refusal::invalid(format!(
                "the active specialist is {}",
                specialist.name()
            )));
        }
        if h.specialist_used {
            return Err(Refusal::not_now("the specialist was already used"));
        }
        if !matches!(self.stage, Stage::Chips(_)) {
            return Err(Refusal::not_now(
                "specialists are proposed during a chip phase",
            ));
        }
        if h.proposal.is_some() || h.pending.is_some() {
            return Err(Refusal::not_now("a proposal is already open"));
        }
        if h.proposed_this_street[seat] {
            return Err(Refusal::not_now("one proposal per player per street"));
        }
        let n = self.config.players;
        if use_.seat() >= n {
            return Err(Refusal::invalid("no such seat"));
        }
        match use_ {
            SpecialistUse::Informant { from, to } if to >= n || to == from => Err(
                Refusal::invalid("the informant shows a card to one other player"),
            ),
            SpecialistUse::Brains { rank, .. } if rank > 12 => {
                Err(Refusal::invalid("a rank is 2..A"))
            }
            SpecialistUse::Valet { seat: who } if h.private[who].contains(&Card::SUITLESS_JACK) => {
                Err(Refusal::not_now(
                    "that player already has the suitless Jack",
                ))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn propose(
        &mut self,
        seat: usize,
        use_: SpecialistUse,
        events: &mut Vec<Event>,
    ) -> Result<(), Refusal> {
        self.check_propose(seat, use_)?;
        let mut votes = vec![None; self.config.players];
        votes[seat] = Some(true);
        self.heist.proposed_this_street[seat] = true;
        self.heist.proposal = Some(Proposal {
            proposer: seat,
            use_,
            votes,
        });
        events.push(Event::Proposed {
            proposer: seat,
            use_,
        });
        Ok(())
    }

    pub(super) fn vote(
        &mut self,
        seat: usize,
        accept: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), Refusal> {
        let proposal = self
            .heist
            .proposal
            .as_mut()
            .ok_or_else(|| Refusal::not_now("no proposal is open"))?;
        if proposal.votes[seat].is_some() {
            return Err(Refusal::not_now("you already voted on this proposal"));
        }
        proposal.votes[seat] = Some(accept);
        events.push(Event::Voted { seat, accept });
        if !accept {
            self.heist.proposal = None;
            events.push(Event::ProposalClosed {
                accepted: false,
                expired: false,
            });
        } else if proposal.votes.iter().all(|v| *v == Some(true)) {
            let use_ = proposal.use_;
            self.heist.proposal = None;
            events.push(Event::ProposalClosed {
                accepted: true,
                expired: false,
            });
            self.apply_specialist(use_, events);
        }
        Ok(())
    }

    fn apply_specialist(&mut self, use_: SpecialistUse, events: &mut Vec<Event>) {
        self.heist.specialist_used = true;
        if let Some(phase) = self.heist.phases.last_mut() {
            phase.ready.iter_mut().for_each(|r| *r = false);
        }
        match use_ {
            SpecialistUse::Informant { from, to } => {
                self.heist.pending = Some(PendingChoice::Show { from, to });
            }
            SpecialistUse::Driver { seat } => {
                let mut hand = self.heist.private[seat].clone();
                hand.extend(&self.heist.community);
                let category = evaluate(&hand).category();
                self.announce(
                    seat,
                    Specialist::Driver,
                    Announcement::BestCategory(category),
                    events,
                );
            }
            SpecialistUse::Brains { seat, rank } => {
                let count = self.heist.private[seat]
                    .iter()
                    .filter(|c| c.rank() == rank)
                    .count() as u32;
                self.announce(
                    seat,
                    Specialist::Brains,
                    Announcement::RankCount { rank, count },
                    events,
                );
            }
            SpecialistUse::Hacker { seat } => {
                let card = self
                    .heist
                    .draw_pile
                    .pop_front()
                    .expect("cards left to draw");
                self.heist.private[seat].push(card);
                events.push(Event::CardDrawn { seat, card });
                self.heist.pending = Some(PendingChoice::Discard {
                    seat,
                    specialist: Specialist::Hacker,
                });
            }
            SpecialistUse::Valet { seat } => {
                self.heist.private[seat].push(Card::SUITLESS_JACK);
                events.push(Event::SuitlessJackTaken { seat });
                self.heist.pending = Some(PendingChoice::Discard {
                    seat,
                    specialist: Specialist::Valet,
                });
            }
            SpecialistUse::Muscle { seat } => {
                self.heist.muscle = Some(seat);
                events.push(Event::MuscleTaken { seat });
            }
        }
    }

    pub(super) fn choose(
        &mut self,
        seat: usize,
        card: Card,
        events: &mut Vec<Event>,
    ) -> Result<(), Refusal> {
        if !self.heist.private[seat].contains(&card) {
            return Err(Refusal::invalid(format!("{card} is not in your hand")));
        }
        if self.stage == Stage::Coordinating {
            if self.heist.coordinator_choices[seat].is_some() {
                return Err(Refusal::not_now("you already chose your card"));
            }
            self.heist.coordinator_choices[seat] = Some(card);
            events.push(Event::CardChosen { seat });
            if self.heist.coordinator_choices.iter().all(|c| c.is_some()) {
                let n = self.config.players;
                let chosen: Vec<Card> = self
                    .heist
                    .coordinator_choices
                    .iter()
                    .map(|c| c.expect("all chose"))
                    .collect();
                for (from, &card) in chosen.iter().enumerate() {
                    let to = (from + 1) % n;
                    self.heist.private[from].retain(|&c| c != card);
                    self.heist.remembered[from].push(card);
                    self.heist.received[to] = Some((from, card));
                }
                for (from, &card) in chosen.iter().enumerate() {
                    let to = (from + 1) % n;
                    self.heist.private[to].push(card);
                    events.push(Event::CardPassed { from, to, card });
                }
                self.heist.specialist_used = true;
                self.open_first_street(events);
            }
            return Ok(());
        }
        match self.heist.pending {
            Some(PendingChoice::Show { from, to }) if from == seat => {
                self.heist.shown_to[to].push((from, card));
                self.heist.pending = None;
                events.push(Event::CardShown { from, to, card });
                Ok(())
            }
            Some(pending @ PendingChoice::Discard { seat: who, .. }) if who == seat => {
                if !pending.allows(card) {
                    return Err(Refusal::invalid(
                        "the Valet discards another card than the suitless Jack",
                    ));
                }
                self.heist.private[seat].retain(|&c| c != card);
                self.heist.discards.push(card);
                if card != Card::SUITLESS_JACK {
                    self.heist.remembered[seat].push(card);
                }
                self.heist.pending = None;
                events.push(Event::CardDiscarded { seat, card });
                Ok(())
            }
            _ => Err(Refusal::not_now("there is no card for you to choose now")),
        }
    }

    pub(super) fn all_uses(&self) -> Vec<SpecialistUse> {
        let n = self.config.players;
        let Some(s) = self
            .heist
            .specialist
            .filter(|_| !self.heist.specialist_used)
        else {
            return Vec::new();
        };
        let mut uses = Vec::new();
        for seat in 0..n {
            match s {
                Specialist::Informant => uses.extend(
                    (0..n)
                        .filter(|&to| to != seat)
                        .map(|to| SpecialistUse::Informant { from: seat, to }),
                ),
                Specialist::Driver => uses.push(SpecialistUse::Driver { seat }),
                Specialist::Brains => {
                    uses.extend((0..13).map(|rank| SpecialistUse::Brains { seat, rank }))
                }
                Specialist::Hacker => uses.push(SpecialistUse::Hacker { seat }),
                Specialist::Valet => uses.push(SpecialistUse::Valet { seat }),
                Specialist::Muscle => uses.push(SpecialistUse::Muscle { seat }),
                _ => {}
            }
        }
        uses
    }
}

impl PendingChoice {
    /// The seat whose choice the engine waits for.
    pub(crate) fn chooser(self) -> usize {
        match self {
            PendingChoice::Show { from, .. } => from,
            PendingChoice::Discard { seat, .. } => seat,
        }
    }

    /// Whether the chooser may choose `card` from its hand: the Valet discards another card
    /// than the suitless Jack it just took; every other choice takes any card.
    pub(crate) fn allows(self, card: Card) -> bool {
        let valet = matches!(
            self,
            PendingChoice::Discard {
                specialist: Specialist::Valet,
                ..
            }
        );
        !(valet && card == Card::SUITLESS_JACK)
    }
}
