//! The pages engage serves itself: the bill page (`GET /b/{bill_id}`), the feedback form
//! (`GET`/`POST /f/{token}`) and the web dashboard (`GET /dashboard`). Their routes are declared by
//! their capabilities ([`super::bills`], [`super::feedback`]) and, for the dashboard, here.

pub mod bill_page;
pub mod dashboard;
pub mod feedback_page;
