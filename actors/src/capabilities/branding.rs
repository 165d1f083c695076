//! How a brand's customer pages (the bill at `/b/{bill_id}`, the feedback form at `/f/{token}`)
//! present it: the names set with `/crm_api/add_b_config` (`business_name` of the brand's own
//! record `"0"` and of the outlet) and the colour of the bill configuration that applies to the
//! outlet (`brandColor`). Read when a page is shown, so a name configured later shows on bills
//! sent before.

use serde::{Deserialize, Serialize};

use crate::capabilities::business;
use crate::query::QueryError;
use crate::tenant_core::Tenant;

/// A brand as its pages show it; each part absent when not configured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Branding {
    /// The brand's name (`business_name` of business `"0"`).
    #[serde(default)]
    pub brand_name: Option<String>,
    /// The outlet's name (`business_name` of the outlet), when it differs from the brand's.
    #[serde(default)]
    pub outlet_name: Option<String>,
    /// `#rrggbb`: the bill configuration's `brandColor` (the outlet's, else the brand's).
    #[serde(default)]
    pub color: Option<String>,
}

/// The branding of `outlet`'s pages; `color` is the `brandColor` of the bill configuration that
/// applies to the outlet (the bills capability knows it: [`crate::capabilities::bills::branding`] calls this).
pub async fn of(tenant: &mut Tenant, outlet: &str, color: Option<String>) -> Result<Branding, QueryError> {
    let name = |config: business::BusinessConfig| config.name().map(str::to_owned);
    let brand_name = name(business::config(tenant, "0").await?);
    let outlet_name = if outlet.is_empty() || outlet == "0" {
        None
    } else {
        name(business::config(tenant, outlet).await?).filter(|n| Some(n) != brand_name.as_ref())
    };
    Ok(Branding { brand_name, outlet_name, color: color.filter(|c| hex_color(c)) })
}

/// Whether `color` is `#rrggbb`.
pub fn hex_color(color: &str) -> bool {
    color.len() == 7 && color.starts_with('#') && color[1..].bytes().all(|b| b.is_ascii_hexdigit())
}
