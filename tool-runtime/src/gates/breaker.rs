//! The refusal breaker: after N consecutive denials in a session, its asks and writes are
//! refused (`too_many_denials`) until the application resets it. A model that keeps trying
//! what a person keeps refusing stops instead of wearing the person down.

use std::collections::HashMap;
use std::sync::Mutex;

/// Sessions with denials are kept up to this many. When full, the counts of sessions not
/// stopped go first (such a session may be asked a few more times); stopped sessions stay
/// stopped unless they fill three quarters of the map.
const MAX_SESSIONS: usize = 100_000;

pub(crate) struct Breaker {
    limit: u32,
    max_sessions: usize,
    denials: Mutex<HashMap<Box<str>, u32>>,
}

impl Breaker {
    pub(crate) fn new(limit: u32) -> Self {
        Self::with_capacity(limit, MAX_SESSIONS)
    }

    fn with_capacity(limit: u32, max_sessions: usize) -> Self {
        Self {
            limit,
            max_sessions,
            denials: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// Whether the session's consecutive denials reached the limit.
    pub(crate) fn tripped(&self, session: &str) -> bool {
        self.limit > 0
            && self
                .denials
                .lock()
                .map(|denials| {
                    denials
                        .get(session)
                        .is_some_and(|&count| count >= self.limit)
                })
                .unwrap_or(false)
    }

    /// A person denied a call of the session.
    pub(crate) fn denied(&self, session: &str) {
        if let Ok(mut denials) = self.denials.lock() {
            if denials.len() >= self.max_sessions && !denials.contains_key(session) {
                denials.retain(|_, count| *count >= self.limit);
                // Room for a quarter of the map at least, so that this scan is paid once per
                // that many new sessions; past it, stopped sessions go too.
                if denials.len() > self.max_sessions - self.max_sessions / 4 {
                    denials.clear();
                }
            }
            *denials.entry(session.into()).or_default() += 1;
        }
    }

    /// A person approved a call of the session, or the application reset it.
    pub(crate) fn reset(&self, session: &str) {
        if let Ok(mut denials) = self.denials.lock() {
            denials.remove(session);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_after_the_limit_and_resets() {
        let breaker = Breaker::new(3);
        for _ in 0..2 {
            breaker.denied("s");
        }
        assert!(!breaker.tripped("s"));
        breaker.denied("s");
        assert!(breaker.tripped("s"));
        assert!(!breaker.tripped("other"));
        breaker.reset("s");
        assert!(!breaker.tripped("s"));
    }

    #[test]
    fn a_full_breaker_forgets_sessions_still_going_before_stopped_ones() {
        let breaker = Breaker::with_capacity(2, 3);
        breaker.denied("stopped");
        breaker.denied("stopped");
        breaker.denied("once");
        breaker.denied("also_once");
        breaker.denied("new");
        assert!(breaker.tripped("stopped"));
        assert_eq!(breaker.denials.lock().map(|d| d.len()).ok(), Some(2));
        breaker.denied("new");
        assert!(breaker.tripped("new"));
    }

    #[test]
    fn a_limit_of_zero_never_trips() {
        let breaker = Breaker::new(0);
        breaker.denied("s");
        assert!(!breaker.tripped("s"));
    }
}
