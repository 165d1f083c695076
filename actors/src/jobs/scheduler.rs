//! The scheduler: one timer per job, the per-occurrence claim in the lease bucket, and [`Jobs::exclusive`] (a drain runs alone, on a node and across nodes).

use super::*;

impl Jobs {
    /// Starts one timer per job; stops when `stop` flips.
    pub fn spawn_scheduler(self: Arc<Self>, stop: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
        self.schedules
            .clone()
            .into_iter()
            .filter_map(|(job, cron)| schedule(&cron).map(|s| (job, s)))
            .map(|(job, schedule)| {
                let jobs = self.clone();
                let mut stop = stop.clone();
                tokio::spawn(async move {
                    while let Some(next) = schedule.upcoming(ist()).next() {
                        let wait = (next.with_timezone(&Utc) - Utc::now()).to_std().unwrap_or_default();
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => {}
                            _ = stop.wait_for(|s| *s) => break,
                        }
                        if jobs.claim(job, next.timestamp()).await {
                            let _ = jobs.run(job, Utc::now()).await;
                        }
                    }
                })
            })
            .collect()
    }

    /// Whether this node runs the occurrence at `at` (always in embedded mode).
    pub(super) async fn claim(&self, job: JobName, at: i64) -> bool {
        match &self.claims {
            None => true,
            Some(bucket) => {
                bucket.create(format!("job.{}.{at}", job.as_str()), self.node.as_bytes().to_vec().into()).await.is_ok()
            }
        }
    }

    /// Runs `work` as the only run of `job` at a time, for a job that reads pending rows, calls a
    /// provider, then marks them: two runs at once would both send the same rows. On this node a
    /// lock per job orders them; in distributed mode the key `run.<job>` in the lease bucket does
    /// the same across nodes. It is created before the run, renewed while it lasts and deleted
    /// after; if its node dies it lapses like a partition lease. A run that finds the job running
    /// waits for it (up to [`EXCLUSIVE_WAIT`] for another node's), then finds those rows sent.
    pub(super) async fn exclusive<T>(
        &self,
        job: JobName,
        work: impl std::future::Future<Output = Result<T, JobError>>,
    ) -> Result<T, JobError> {
        let local = {
            let mut running = self.running.lock().map_err(|_| JobError::Poisoned)?;
            running.entry(job).or_default().clone()
        };
        let _local = local.lock().await;
        let Some(bucket) = &self.claims else {
            return work.await;
        };
        let key = format!("run.{}", job.as_str());
        let holder = bytes::Bytes::from(self.node.clone().into_bytes());
        let lifetime = bucket.status().await.map(|status| status.max_age()).unwrap_or_default();
        let deadline = Instant::now() + EXCLUSIVE_WAIT;
        let mut revision = loop {
            match bucket.create(&key, holder.clone()).await {
                Ok(revision) => break revision,
                Err(error) if error.kind() == async_nats::jetstream::kv::CreateErrorKind::AlreadyExists => {
                    if Instant::now() >= deadline {
                        return Err(JobError::Busy { job: job.as_str(), key });
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(error) => return Err(JobError::Claim { key, cause: error.to_string() }),
            }
        };
        tracing::debug!(key, revision, "job run claimed");
        let mut renew = tokio::time::interval((lifetime / 3).max(Duration::from_millis(100)));
        renew.tick().await;
        tokio::pin!(work);
        let outcome = loop {
            tokio::select! {
                outcome = &mut work => break outcome,
                _ = renew.tick() => match bucket.update(&key, holder.clone(), revision).await {
                    Ok(next) => revision = next,
                    Err(error) => tracing::warn!(%error, key, "cannot renew a job run's claim"),
                },
            }
        };
        if let Err(error) = bucket.delete_expect_revision(&key, Some(revision)).await {
            tracing::warn!(%error, key, "cannot release a job run's claim; it lapses with the lease");
        }
        outcome
    }
}
