//! Failed password logins, limited: after a few failures under one key (a user name, a client
//! address), each further try under that key must wait a delay that doubles with every failure
//! up to a cap; a success or a quiet period forgets the key. Tries under other keys are not
//! slowed, so an attacker guessing one user's password does not slow everyone's logins.
//!
//! A pure state machine: the caller passes the clock (`now`) and decides what a key is and
//! what a refusal looks like (docs answers 429 with `Retry-After`). A refused try does not
//! check the password and does not count as a failure. Memory is bounded: when the table is
//! full, keys quiet for longer than the quiet period go first, then the least recently failed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many failures a key gets for free, and how the delay grows after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    /// Failures in a row before any delay.
    pub free_failures: u32,
    /// The delay after the first failure past the free ones; it doubles with each further one.
    pub base_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
    /// A key without a failure for this long is forgotten.
    pub quiet: Duration,
    /// The most keys remembered.
    pub max_keys: usize,
}

impl ThrottlePolicy {
    /// Per user name: 5 free failures, then 1 s doubling up to 60 s; forgotten after 15 quiet
    /// minutes.
    pub fn per_user() -> Self {
        ThrottlePolicy {
            free_failures: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            quiet: Duration::from_secs(15 * 60),
            max_keys: 100_000,
        }
    }

    /// Per client address: many users may share one (a NAT, a proxy), so 50 free failures
    /// before the same doubling delay.
    pub fn per_address() -> Self {
        ThrottlePolicy {
            free_failures: 50,
            ..ThrottlePolicy::per_user()
        }
    }

    /// The delay after `failures` failures in a row (zero while they are free).
    pub fn delay(&self, failures: u32) -> Duration {
        let Some(past_free) = failures.checked_sub(self.free_failures + 1) else {
            return Duration::ZERO;
        };
        let factor = 1u32.checked_shl(past_free.min(31)).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
    blocked_until: Instant,
}

/// The failures remembered per key under one policy.
#[derive(Debug)]
pub struct LoginThrottle {
    policy: ThrottlePolicy,
    keys: HashMap<String, Failures>,
}

impl LoginThrottle {
    /// An empty throttle.
    pub fn new(policy: ThrottlePolicy) -> Self {
        LoginThrottle {
            policy,
            keys: HashMap::new(),
        }
    }

    /// `Err(wait)` when a try under `key` must wait `wait` longer before its password is
    /// checked; `Ok` when it may be checked now.
    pub fn check(&self, key: &str, now: Instant) -> Result<(), Duration> {
        match self.keys.get(key) {
            Some(f) if f.blocked_until > now && !self.quiet(f, now) => Err(f.blocked_until - now),
            _ => Ok(()),
        }
    }

    /// Records a failed try under `key`; returns the delay now imposed on it.
    pub fn failed(&mut self, key: &str, now: Instant) -> Duration {
        if !self.keys.contains_key(key) && self.keys.len() >= self.policy.max_keys {
            self.make_room(now);
        }
        let policy = self.policy;
        let entry = self.keys.entry(key.to_owned()).or_insert(Failures {
            count: 0,
            last: now,
            blocked_until: now,
        });
        if now.saturating_duration_since(entry.last) >= policy.quiet {
            entry.count = 0;
        }
        entry.count = entry.count.saturating_add(1);
        entry.last = now;
        let delay = policy.delay(entry.count);
        entry.blocked_until = now + delay;
        delay
    }

    /// A successful login under `key`: its failures are forgotten.
    pub fn succeeded(&mut self, key: &str) {
        self.keys.remove(key);
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn quiet(&self, failures: &Failures, now: Instant) -> bool {
        now.saturating_duration_since(failures.last) >= self.policy.quiet
    }

    fn make_room(&mut self, now: Instant) {
        let quiet = self.policy.quiet;
        self.keys
            .retain(|_, f| now.saturating_duration_since(f.last) < quiet);
        if self.keys.len() >= self.policy.max_keys
            && let Some(oldest) = self
                .keys
                .iter()
                .min_by_key(|(_, f)| f.last)
                .map(|(k, _)| k.clone())
        {
            self.keys.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ThrottlePolicy {
        ThrottlePolicy {
            free_failures: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
            quiet: Duration::from_secs(600),
            max_keys: 3,
        }
    }

    fn failing(throttle: &mut LoginThrottle, key: &str, times: u32, now: Instant) -> Duration {
        (0..times).fold(Duration::ZERO, |_, _| throttle.failed(key, now))
    }

    #[test]
    fn given_free_failures_when_checked_then_no_delay() {
        let (mut throttle, now) = (LoginThrottle::new(policy()), Instant::now());
        assert_eq!(failing(&mut throttle, "ann", 3, now), Duration::ZERO);
        assert_eq!(throttle.check("ann", now), Ok(()));
    }

    #[test]
    fn given_failures_past_the_free_ones_then_the_delay_doubles_up_to_the_cap() {
        let (mut throttle, now) = (LoginThrottle::new(policy()), Instant::now());
        failing(&mut throttle, "ann", 3, now);
        let delays: Vec<u64> = (0..6)
            .map(|_| throttle.failed("ann", now).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 8, 8, 8]);
        assert_eq!(throttle.check("ann", now), Err(Duration::from_secs(8)));
        let later = now + Duration::from_secs(8);
        assert_eq!(throttle.check("ann", later), Ok(()));
    }

    #[test]
    fn given_one_key_blocked_then_another_key_is_not() {
        let (mut throttle, now) = (LoginThrottle::new(policy()), Instant::now());
        failing(&mut throttle, "ann", 10, now);
        assert!(throttle.check("ann", now).is_err());
        assert_eq!(throttle.check("bob", now), Ok(()));
    }

    #[test]
    fn given_a_blocked_key_when_it_succeeds_or_stays_quiet_then_it_is_forgotten() {
        let (mut throttle, now) = (LoginThrottle::new(policy()), Instant::now());
        failing(&mut throttle, "ann", 10, now);
        throttle.succeeded("ann");
        assert_eq!(throttle.check("ann", now), Ok(()));
        assert_eq!(throttle.failed("ann", now), Duration::ZERO);
        failing(&mut throttle, "bob", 10, now);
        let quiet = now + Duration::from_secs(600);
        assert_eq!(throttle.check("bob", quiet), Ok(()));
        assert_eq!(throttle.failed("bob", quiet), Duration::ZERO);
    }

    #[test]
    fn given_a_full_table_then_the_oldest_key_makes_room() {
        let (mut throttle, now) = (LoginThrottle::new(policy()), Instant::now());
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            failing(&mut throttle, key, 10, now + Duration::from_secs(i as u64));
        }
        throttle.failed("d", now + Duration::from_secs(5));
        assert_eq!(throttle.len(), 3);
        assert_eq!(throttle.check("a", now + Duration::from_secs(5)), Ok(()));
        assert!(throttle.check("c", now + Duration::from_secs(5)).is_err());
    }
}
