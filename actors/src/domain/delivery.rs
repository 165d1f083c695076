//! Why a call to an outside service (an SMS, chat or push provider, the legacy SMS gateway, the
//! link service, an app store) did not do its part: the text is what a queue row keeps as its last
//! error, or what a job reports.

/// A call to an outside service that did not do its part.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// The service could not be reached (`what` names it: "provider", "gateway").
    #[error("{what} unreachable: {error}")]
    Unreachable {
        /// Which service.
        what: &'static str,
        /// Why.
        error: String,
    },
    /// The service answered with a status that is not a success.
    #[error("{what} answered {status}")]
    Refused {
        /// Which service.
        what: &'static str,
        /// Its status line (`502 Bad Gateway`).
        status: String,
    },
    /// The service answered something engage cannot use.
    #[error("{what} answer is unusable: {error}")]
    BadAnswer {
        /// Which service.
        what: &'static str,
        /// Why.
        error: String,
    },
    /// The provider refused the message for good (an invalid number, a template it does not
    /// know): another attempt would be refused the same way.
    #[error("{what} refused the message: {reason}")]
    Rejected {
        /// Which service.
        what: &'static str,
        /// Its status and what it said.
        reason: String,
    },
    /// The service kept throttling or failing through every attempt.
    #[error("{what} still throttling or failing after {attempts} attempts")]
    GaveUp {
        /// Which service.
        what: &'static str,
        /// Attempts made.
        attempts: u32,
    },
}

impl DeliveryError {
    /// Whether another attempt cannot help ([`DeliveryError::Rejected`]).
    pub fn is_permanent(&self) -> bool {
        matches!(self, Self::Rejected { .. })
    }
}
