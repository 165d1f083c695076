//! The ScyllaDB backend (`scylla` driver, prepared statements only). Schema: `schema/scylla.cql`.
//!
//! Writes are `UPDATE … SET value = ?`: a put binds the value, a delete binds null. Rows written by
//! UPDATE carry no row marker, so a null value removes the row, and puts and deletes share one
//! prepared statement, which lets a mixed batch be one LOGGED batch (atomic).

use std::sync::Arc;

use async_trait::async_trait;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;

use super::{Row, Store, StoreError, WriteOp};

/// A [`Store`] in a ScyllaDB keyspace.
#[derive(Clone)]
pub struct ScyllaStore {
    session: Arc<Session>,
    get: PreparedStatement,
    scan_from_start: PreparedStatement,
    scan_after: PreparedStatement,
    write: PreparedStatement,
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

impl ScyllaStore {
    /// Connects to `nodes` (`host:port`, comma-separated), creates the keyspace and table when
    /// missing (replication factor `replication`), and prepares the statements.
    pub async fn connect(nodes: &str, keyspace: &str, replication: u32) -> Result<Self, StoreError> {
        if keyspace.is_empty() || !keyspace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StoreError::Backend(format!("invalid keyspace name {keyspace:?}")));
        }
        let session = SessionBuilder::new()
            .known_nodes(nodes.split(',').map(str::trim).filter(|n| !n.is_empty()))
            .build()
            .await
            .map_err(backend)?;
        session
            .query_unpaged(
                format!(
                    "CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = \
                     {{'class': 'NetworkTopologyStrategy', 'replication_factor': {replication}}}"
                ),
                (),
            )
            .await
            .map_err(backend)?;
        session
            .query_unpaged(
                format!(
                    "CREATE TABLE IF NOT EXISTS {keyspace}.rows (tbl text, pk text, ck blob, value blob, \
                     PRIMARY KEY ((tbl, pk), ck)) WITH CLUSTERING ORDER BY (ck ASC)"
                ),
                (),
            )
            .await
            .map_err(backend)?;
        let prepare = |cql: String| {
            let session = &session;
            async move { session.prepare(cql).await.map_err(backend) }
        };
        let get = prepare(format!("SELECT value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? AND ck = ?")).await?;
        let scan_from_start =
            prepare(format!("SELECT ck, value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? LIMIT ?")).await?;
        let scan_after =
            prepare(format!("SELECT ck, value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? AND ck > ? LIMIT ?"))
                .await?;
        let write =
            prepare(format!("UPDATE {keyspace}.rows SET value = ? WHERE tbl = ? AND pk = ? AND ck = ?")).await?;
        Ok(Self { session: Arc::new(session), get, scan_from_start, scan_after, write })
    }
}

#[async_trait]
impl Store for ScyllaStore {
    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let result = self.session.execute_unpaged(&self.get, (table, partition, clustering)).await.map_err(backend)?;
        let rows = result.into_rows_result().map_err(backend)?;
        let first = rows.maybe_first_row::<(Option<Vec<u8>>,)>().map_err(backend)?;
        Ok(first.and_then(|(value,)| value))
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let limit = i32::try_from(limit).unwrap_or(i32::MAX);
        let result = match after {
            Some(after) => self.session.execute_unpaged(&self.scan_after, (table, partition, after, limit)).await,
            None => self.session.execute_unpaged(&self.scan_from_start, (table, partition, limit)).await,
        }
        .map_err(backend)?;
        let rows = result.into_rows_result().map_err(backend)?;
        let mut out = Vec::new();
        for row in rows.rows::<(Vec<u8>, Option<Vec<u8>>)>().map_err(backend)? {
            let (clustering, value) = row.map_err(backend)?;
            if let Some(value) = value {
                out.push(Row { clustering, value });
            }
        }
        Ok(out)
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::new(BatchType::Logged);
        let mut values: Vec<(Option<Vec<u8>>, &'static str, String, Vec<u8>)> = Vec::with_capacity(ops.len());
        for op in super::last_writes(ops) {
            batch.append_statement(self.write.clone());
            values.push(match op {
                WriteOp::Put { table, partition, clustering, value } => (Some(value), table, partition, clustering),
                WriteOp::Delete { table, partition, clustering } => (None, table, partition, clustering),
            });
        }
        self.session.batch(&batch, values).await.map_err(backend)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conformance suite against a real ScyllaDB. None can run on the build machines, so this
    /// test is ignored by default; `scripts/test.sh` runs it (`--run-ignored`) when
    /// `ENGAGE_TEST_SCYLLA=host:port` is set.
    #[tokio::test]
    #[ignore = "needs ENGAGE_TEST_SCYLLA=host:port (no ScyllaDB can run on the build machines)"]
    async fn scylla_store_passes_conformance() {
        let nodes = std::env::var("ENGAGE_TEST_SCYLLA").expect("ENGAGE_TEST_SCYLLA=host:port");
        let keyspace = format!("engage_conformance_{}", std::process::id());
        let store = ScyllaStore::connect(&nodes, &keyspace, 1).await.expect("scylla connects");
        crate::store::conformance::run_all(&store).await;
    }
}
