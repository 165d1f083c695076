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
    tenants: Mutex<HashMap<String, (Instant, bool)>>,
}

/// How long a brand's open-routes setting is cached: a change made on another process is seen
/// within this time.
pub const BRAND_SETTING_TTL: Duration = Duration::from_secs(5);

impl OpenRoutes {
    /// `closed_for_all` from the setting.
    pub fn new(closed_for_all: bool) -> Self {
        Self { closed_for_all, tenants: Mutex::new(HashMap::new()) }
    }

    /// Whether every open route is closed on this process.
    pub fn closed_for_all(&self) -> bool {
        self.closed_for_all
    }

    /// The cached setting of `tenant`, when fresh.
    pub fn cached(&self, tenant: &str) -> Option<bool> {
        let tenants = self.tenants.lock().ok()?;
        tenants.get(tenant).filter(|(at, _)| at.elapsed() < BRAND_SETTING_TTL).map(|(_, closed)| *closed)
    }

    /// Remembers `tenant`'s setting.
    pub fn remember(&self, tenant: &str, closed: bool) {
        if let Ok(mut tenants) = self.tenants.lock() {
            if tenants.len() > 100_000 {
                tenants.retain(|_, (at, _)| at.elapsed() < BRAND_SETTING_TTL);
            }
            tenants.insert(tenant.to_owned(), (Instant::now(), closed));
        }
    }
}
