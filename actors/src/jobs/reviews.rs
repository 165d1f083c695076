//! `review_sync`: app-store reviews of each brand's apps.

use super::*;

impl Jobs {
    /// The app-store review sync: each brand with feedback whose own feedback configuration
    /// names an app of a store that is set up.
    pub(super) async fn sync_reviews(&self, now: DateTime<Utc>) -> Result<ReviewRun, JobError> {
        use crate::reviews::{sync, AppStore, Synced};
        let mut total = ReviewRun::default();
        let mut failed = Vec::new();
        for tenant in self.tenants(FEEDBACK_BRANDS).await? {
            let config: Option<crate::capabilities::feedback::FeedbackConfig> =
                self.repo.get(&keys::feedback_config(&tenant, "0")).await?;
            let Some(config) = config else { continue };
            for (store, client, app) in [
                (AppStore::A, &self.providers.store_a, &config.store_a_app_id),
                (AppStore::B, &self.providers.store_b, &config.store_b_app_id),
            ] {
                let Some(app) = app.as_deref().filter(|a| !a.is_empty()) else { continue };
                match sync(&self.repo, &self.client, client, store, &tenant, app, now).await {
                    Ok(done) => {
                        let slot = match store {
                            AppStore::A => &mut total.a,
                            AppStore::B => &mut total.b,
                        };
                        let sum = slot.get_or_insert_with(Synced::default);
                        sum.pages += done.pages;
                        sum.read += done.read;
                        sum.inserted += done.inserted;
                        sum.updated += done.updated;
                        sum.unchanged += done.unchanged;
                        sum.retried += done.retried;
                    }
                    Err(error) => {
                        tracing::warn!(tenant, store = store.as_str(), %error, "review sync failed; the next run resumes from the marker");
                        failed.push(format!("{tenant}/{}", store.as_str()));
                    }
                }
            }
        }
        total.failed = failed.clone();
        all_tenants(total, &failed)
    }
}
