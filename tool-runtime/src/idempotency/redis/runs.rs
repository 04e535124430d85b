//! [`RedisStore`] as a [`RunStore`] and a [`DecisionStore`]: runs' records and route
//! decisions shared by every process connected to the same server, so a run one process
//! started, another continues.

use std::io;
use std::time::Duration;

use tool_core::BoxFuture;

use super::codec::{decode, encode, escape, ttl_millis};
use super::error::RedisStoreError;
use super::{RedisStore, bounded};
use crate::routing::{DecisionKey, DecisionStore, RouteDecision};
use crate::run::{RunEvent, RunKey, RunStore, taken};

impl RedisStore {
    /// Keeps runs' records and route decisions for `ttl` (7 days by default). A record's
    /// time starts again with each event appended, so a run that goes on keeps its record;
    /// a decision's runs from when it was recorded. Past it a run started again with the same
    /// id starts from the beginning (its writes still answered by the idempotency layer while
    /// their window lasts).
    #[must_use]
    pub fn with_run_ttl(mut self, ttl: Duration) -> Self {
        self.run_ttl = ttl;
        self
    }

    /// How long runs' records and route decisions are kept.
    pub fn run_ttl(&self) -> Duration {
        self.run_ttl
    }

    /// The key of a run's record: `<prefix>:run:<session>:<run>`, session and run escaped
    /// (`%` as `%25`, `:` as `%3A`).
    pub fn run_key(&self, key: &RunKey) -> String {
        format!(
            "{}:run:{}:{}",
            self.prefix,
            escape(&key.session),
            escape(&key.run)
        )
    }

    /// The key of a route decision: `<prefix>:route:<session>:<request>:<step>`, each segment
    /// escaped (`%` as `%25`, `:` as `%3A`; a step `route:intent:v1` is one segment).
    pub fn decision_key(&self, key: &DecisionKey) -> String {
        format!(
            "{}:route:{}:{}:{}",
            self.prefix,
            escape(&key.session),
            escape(&key.request),
            escape(&key.step)
        )
    }

    async fn load_run(&self, key: &RunKey) -> io::Result<Vec<RunEvent>> {
        let redis_key = self.run_key(key);
        let mut connection = self.connection.clone();
        let texts: Vec<String> = bounded(self.command_timeout, async {
            Ok(::redis::cmd("LRANGE")
                .arg(&redis_key)
                .arg(0)
                .arg(-1)
                .query_async(&mut connection)
                .await?)
        })
        .await?;
        texts.iter().map(|text| decode(&redis_key, text)).collect()
    }

    async fn append_run(&self, key: &RunKey, position: usize, event: &RunEvent) -> io::Result<()> {
        let redis_key = self.run_key(key);
        let text = encode(&redis_key, event)?;
        let mut connection = self.connection.clone();
        let answer: Vec<i64> = bounded(self.command_timeout, async {
            Ok(self
                .scripts
                .append_run
                .key(&redis_key)
                .arg(position)
                .arg(text)
                .arg(ttl_millis(self.run_ttl))
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        match answer[..] {
            [1] => Ok(()),
            [0, held] => Err(taken(
                key,
                position,
                usize::try_from(held).unwrap_or(usize::MAX),
            )),
            _ => Err(RedisStoreError::Unexpected {
                key: redis_key,
                answer: format!("{answer:?}"),
            }
            .into()),
        }
    }

    async fn get_decision(&self, key: &DecisionKey) -> io::Result<Option<RouteDecision>> {
        let redis_key = self.decision_key(key);
        let mut connection = self.connection.clone();
        let text: Option<String> = bounded(self.command_timeout, async {
            Ok(::redis::cmd("GET")
                .arg(&redis_key)
                .query_async(&mut connection)
                .await?)
        })
        .await?;
        text.map(|text| decode_decision(&redis_key, &text))
            .transpose()
    }

    async fn record_decision(
        &self,
        key: &DecisionKey,
        decision: &RouteDecision,
    ) -> io::Result<RouteDecision> {
        let redis_key = self.decision_key(key);
        let text = encode(&redis_key, decision)?;
        let mut connection = self.connection.clone();
        let kept: Option<String> = bounded(self.command_timeout, async {
            Ok(self
                .scripts
                .record_decision
                .key(&redis_key)
                .arg(text)
                .arg(ttl_millis(self.run_ttl))
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        match kept {
            Some(text) => decode_decision(&redis_key, &text),
            // SET NX then GET in one script: the key holds a decision when the script ends.
            None => Err(RedisStoreError::Unexpected {
                key: redis_key,
                answer: "nil".to_owned(),
            }
            .into()),
        }
    }
}

fn decode_decision(redis_key: &str, text: &str) -> io::Result<RouteDecision> {
    decode(redis_key, text)
}

impl RunStore for RedisStore {
    fn load<'a>(&'a self, key: &'a RunKey) -> BoxFuture<'a, io::Result<Vec<RunEvent>>> {
        Box::pin(self.load_run(key))
    }

    fn append<'a>(
        &'a self,
        key: &'a RunKey,
        position: usize,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.append_run(key, position, event))
    }
}

impl DecisionStore for RedisStore {
    fn get<'a>(&'a self, key: &'a DecisionKey) -> BoxFuture<'a, io::Result<Option<RouteDecision>>> {
        Box::pin(self.get_decision(key))
    }

    fn record<'a>(
        &'a self,
        key: &'a DecisionKey,
        decision: &'a RouteDecision,
    ) -> BoxFuture<'a, io::Result<RouteDecision>> {
        Box::pin(self.record_decision(key, decision))
    }
}
