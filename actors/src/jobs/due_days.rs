//! The day buckets of the due-time indexes (`pending_redemptions`, `points_expiry`): a run reads
//! the legacy `due` partition (rows from before the buckets, until it is empty) and each day from
//! the table's cursor to today, never one partition holding every brand's rows of every day. The
//! cursor (`job_cursors`) moves to the oldest day that still holds a row once a run has handled
//! the days before it.

use chrono::{Duration, NaiveDate};

use super::*;

/// How far back the first run (no cursor yet) looks.
const FIRST_LOOK_BACK_DAYS: i64 = 7;

/// One partition a run reads: its day (`None`: the legacy partition) and its name.
pub(super) struct DuePartition {
    pub(super) day: Option<NaiveDate>,
    pub(super) name: String,
}

impl Jobs {
    /// The partitions of `table` a run at `now` reads, oldest first.
    pub(super) async fn due_partitions(
        &self,
        table: &'static str,
        now: DateTime<Utc>,
    ) -> Result<Vec<DuePartition>, JobError> {
        let today = now.date_naive();
        let cursor: Option<String> = self.repo.get(&keys::due_cursor(table)).await?;
        // rows are indexed when they are written, due later: with no cursor yet, nothing is due
        // before a few days ago on this clock (a run may be asked as at another time)
        let mut day = cursor
            .and_then(|day| NaiveDate::parse_from_str(&day, "%Y-%m-%d").ok())
            .unwrap_or(Utc::now().date_naive() - Duration::days(FIRST_LOOK_BACK_DAYS))
            .min(today);
        let mut out = vec![DuePartition { day: None, name: keys::LEGACY_DUE.to_owned() }];
        while day <= today {
            let at = day.and_hms_opt(12, 0, 0).unwrap_or_default().and_utc();
            out.push(DuePartition { day: Some(day), name: keys::due_bucket(at) });
            day += Duration::days(1);
        }
        Ok(out)
    }

    /// Keeps `oldest_left` (the oldest day a run left a row in; none: today) as `table`'s cursor,
    /// a day earlier still so a row written on a clock a little behind is not passed over. A run
    /// asked as at a later time (`engage jobs run --now`) never moves it past this clock's
    /// yesterday: rows due before then may still be written.
    pub(super) async fn keep_due_cursor(
        &self,
        table: &'static str,
        now: DateTime<Utc>,
        oldest_left: Option<NaiveDate>,
    ) -> Result<(), JobError> {
        let yesterday = now.min(Utc::now()).date_naive() - Duration::days(1);
        let day = oldest_left.map_or(yesterday, |day| day.min(yesterday));
        let cursor = keys::due_cursor(table).put(&day.format("%Y-%m-%d").to_string());
        self.repo.store().batch(vec![cursor]).await?;
        Ok(())
    }
}
