//! What the platform routes share ([`PlatformState`]), in a module that imports no route: the
//! process state ([`crate::state::AppState`]) holds it, and every route reads it from there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engage_actors::TenantGateway;
use engage_streams::Bus;

use crate::platform::edge::schemas::PlatformSchemas;
use crate::platform::edge::tokens::TokenStore;
use crate::rate_limit::CallerLimiter;

/// What the platform routes share.
pub struct PlatformState {
    /// The bus orders are published on.
    pub bus: Arc<dyn Bus>,
    /// Questions to tenant actors (local or by NATS).
    pub gateway: TenantGateway,
    /// Stored tokens.
    pub tokens: TokenStore,
    /// Compiled body schemas.
    pub schemas: PlatformSchemas,
    /// Key of the loopback admin routes.
    pub admin_key: String,
    /// The two reads without a brand's actor: whose bill a public link is, and whether a brand
    /// closed its open routes (everything else a brand holds is asked of its actor through
    /// [`PlatformState::gateway`]).
    pub directory: engage_actors::directory::Directory,
    /// The scheduled jobs, on processes that run the engine.
    pub jobs: Option<Arc<engage_actors::jobs::Jobs>>,
    /// Verifies chat tracking links.
    pub links: engage_actors::signed_links::Links,
    /// Whether the spec's open routes are open (for all brands, and per brand).
    pub open_routes: OpenRoutes,
    /// The per-client limit of the open routes that read or change a customer
    /// (`ENGAGE_OPEN_ROUTES_RATE_LIMIT`), when on.
    pub open_limiter: Option<Arc<CallerLimiter>>,
}

/// Whether the spec's open routes are open, for every brand (`ENGAGE_OPEN_ROUTES`) and per brand
/// (`/crm_api/open_routes/settings`, kept in the store and cached here for [`BRAND_SETTING_TTL`]).
pub struct OpenRoutes {
    closed_for_all: bool,
    tenants: Mutex<BrandSettings>,
}

/// The cached per-brand settings, and the size at which the stale ones are next dropped.
#[derive(Default)]
struct BrandSettings {
    by_tenant: HashMap<String, (Instant, bool)>,
    prune_at: usize,
}

/// The fewest cached brand settings before stale ones are dropped.
const PRUNE_AT_LEAST: usize = 1_024;

/// How long a brand's open-routes setting is cached: a change made on another process is seen
/// within this time.
pub const BRAND_SETTING_TTL: Duration = Duration::from_secs(5);

impl OpenRoutes {
    /// `closed_for_all` from the setting.
    pub fn new(closed_for_all: bool) -> Self {
        Self { closed_for_all, tenants: Mutex::new(BrandSettings::default()) }
    }

    /// Whether every open route is closed on this process.
    pub fn closed_for_all(&self) -> bool {
        self.closed_for_all
    }

    /// The cached setting of `tenant`, when fresh.
    pub fn cached(&self, tenant: &str) -> Option<bool> {
        let tenants = self.tenants.lock().ok()?;
        tenants.by_tenant.get(tenant).filter(|(at, _)| at.elapsed() < BRAND_SETTING_TTL).map(|(_, closed)| *closed)
    }

    /// Remembers `tenant`'s setting. Once the map has doubled since it was last pruned (and holds
    /// at least [`PRUNE_AT_LEAST`]), the stale settings are dropped and the map shrunk: it holds
    /// about the brands seen within [`BRAND_SETTING_TTL`], not every brand ever seen (issue 57).
    pub fn remember(&self, tenant: &str, closed: bool) {
        self.remember_at(tenant, closed, Instant::now());
    }

    fn remember_at(&self, tenant: &str, closed: bool, now: Instant) {
        if let Ok(mut tenants) = self.tenants.lock() {
            if tenants.by_tenant.len() >= tenants.prune_at.max(PRUNE_AT_LEAST) {
                tenants.by_tenant.retain(|_, (at, _)| at.elapsed() < BRAND_SETTING_TTL);
                tenants.by_tenant.shrink_to_fit();
                tenants.prune_at = tenants.by_tenant.len() * 2;
            }
            tenants.by_tenant.insert(tenant.to_owned(), (now, closed));
        }
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.tenants.lock().map(|tenants| tenants.by_tenant.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 20,000 brands seen once long ago and then a few seen now: the stale settings are dropped,
    /// the fresh ones kept and answered.
    #[test]
    fn stale_brand_settings_are_dropped_as_brands_come_and_go() {
        let routes = OpenRoutes::new(false);
        let long_ago = Instant::now().checked_sub(BRAND_SETTING_TTL * 2).unwrap_or_else(Instant::now);
        for n in 0..20_000 {
            routes.remember_at(&format!("old-{n}"), true, long_ago);
        }
        assert!(routes.remembered() < 20_000, "stale settings pile up: {}", routes.remembered());
        for n in 0..3_000 {
            routes.remember(&format!("new-{n}"), n % 2 == 0);
        }
        assert!(routes.remembered() <= 3_000 + PRUNE_AT_LEAST * 2, "{} remembered", routes.remembered());
        assert_eq!(routes.cached("new-0"), Some(true));
        assert_eq!(routes.cached("new-1"), Some(false));
        assert_eq!(routes.cached("new-2999"), Some(false));
        assert_eq!(routes.cached("old-19999"), None, "a stale setting is not answered");
    }
}
