//! The arena ids of the built hierarchy: domains, groups, capacity objects and shared
//! objects are indexed by these.
//!
//! They are on their own, below `domain` and `ring`, because a domain holds its group
//! ring and the ring holds group ids: with the ids in `domain`, each imported the other.

/// Index of a domain in [`SchedDomains::domains`](crate::domain::SchedDomains::domains).
pub type SdId = usize;
/// Index of a group in [`SchedDomains::groups`](crate::domain::SchedDomains::groups).
pub type GroupId = usize;
/// Index of a group capacity in [`SchedDomains::sgcs`](crate::domain::SchedDomains::sgcs).
pub type SgcId = usize;
/// Index of a shared-state object in [`SchedDomains::shared`](crate::domain::SchedDomains::shared).
pub type SharedId = usize;
