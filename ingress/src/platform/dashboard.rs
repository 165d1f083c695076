//! `GET /dashboard`: the web dashboard, one page served from the binary (`dashboard.html`: HTML,
//! CSS and a small script, no build chain, no external assets). The page signs in with a staff
//! token (kept in the tab's `sessionStorage`), asks the `/stats` routes for the chosen brand,
//! outlet and period, and draws the charts as SVG; it works down to phone width.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use super::routes::Routes;

/// The page.
pub const PAGE: &str = include_str!("dashboard.html");

/// What the page may load: only this origin; its own inline style and script.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                      connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

/// Routes of this module, each declared once ([`Routes`]).
pub fn routes() -> Routes {
    Routes::new().route(
        "/dashboard",
        get(page),
        serde_json::json!({"get": {
            "summary": "The web dashboard: one HTML page (sign in with a staff token; it reads the /stats routes)",
            "tags": ["stats"],
            "security": [],
            "responses": {"200": super::routes::html("the page")}}}),
    )
}

async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::CACHE_CONTROL, "no-cache"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        PAGE,
    )
}
