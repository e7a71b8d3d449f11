//! `GroupRing`: a domain's circular group list, shared between the CPUs whose domains
//! walk the same groups in the same cyclic order.
//!
//! The kernel links a level's groups into one ring (`sg->next`), shared by every CPU of
//! the span, and each CPU's `sd->groups` points at its own group in it, so the level costs
//! one pointer per CPU. Storing each CPU's list whole would cost the number of groups per
//! CPU instead: 512 SMT groups in each of 2048 CPUs' MC domains on a 2-socket 1024-core
//! machine is 8 MiB, growing as the square of the CPUs. A ring here is the list of one
//! CPU and a start offset, and a CPU whose list is a rotation of an existing ring shares
//! it (the builder checks the rotation element by element, so every walk visits the same
//! groups in the same order as a list of its own would).

use std::sync::Arc;

use crate::ids::GroupId;

/// A circular list of groups, read from `start`: index 0 is `sd->groups`. Two rings are
/// equal when they walk the same groups in the same order, shared or not.
#[derive(Debug, Clone)]
pub struct GroupRing {
    ring: Arc<[GroupId]>,
    start: usize,
}

impl PartialEq for GroupRing {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for GroupRing {}

impl Default for GroupRing {
    fn default() -> Self {
        GroupRing {
            ring: Arc::from(Vec::new()),
            start: 0,
        }
    }
}

impl GroupRing {
    /// A ring of its own holding `list` in order.
    pub fn from_list(list: Vec<GroupId>) -> GroupRing {
        GroupRing {
            ring: Arc::from(list),
            start: 0,
        }
    }

    /// `list` as a view of `self`'s ring, when `list` is one of its rotations; `None`
    /// otherwise.
    pub fn rotation_for(&self, list: &[GroupId]) -> Option<GroupRing> {
        let n = self.ring.len();
        if n != list.len() || n == 0 {
            return None;
        }
        let start = self.ring.iter().position(|&g| g == list[0])?;
        let (tail, head) = self.ring.split_at(start);
        let same = head.iter().chain(tail).eq(list.iter());
        same.then(|| GroupRing {
            ring: Arc::clone(&self.ring),
            start,
        })
    }

    /// The same shared list viewed from its `at`-th group (counted in the list as first
    /// built, whatever this view's start).
    pub fn rotated(&self, at: usize) -> GroupRing {
        GroupRing {
            ring: Arc::clone(&self.ring),
            start: if self.ring.is_empty() {
                0
            } else {
                at % self.ring.len()
            },
        }
    }

    /// The same ring with every group id mapped through `f`, sharing nothing.
    pub fn mapped(&self, f: impl Fn(GroupId) -> GroupId) -> GroupRing {
        GroupRing {
            ring: self.ring.iter().map(|&g| f(g)).collect(),
            start: self.start,
        }
    }

    /// Whether `self` and `other` view the same shared list (perhaps from different
    /// starts).
    pub fn shares_with(&self, other: &GroupRing) -> bool {
        Arc::ptr_eq(&self.ring, &other.ring)
    }

    /// An identity of the shared list, equal for rings that share it: a lookup key for
    /// code that maps each shared list once (never iterated in an order that reaches an
    /// output).
    pub fn list_key(&self) -> usize {
        Arc::as_ptr(&self.ring).cast::<GroupId>() as usize
    }

    /// The same list viewed from `other`'s start, for a ring mapped once and shared again.
    pub fn with_start_of(&self, other: &GroupRing) -> GroupRing {
        GroupRing {
            ring: Arc::clone(&self.ring),
            start: other.start,
        }
    }

    /// `sd->nr_groups`.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether the list is empty (only while a domain is being built).
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// `sd->groups`, if any.
    pub fn first(&self) -> Option<&GroupId> {
        self.ring.get(self.start)
    }

    /// The groups from `sd->groups` round the ring.
    pub fn iter(&self) -> impl Iterator<Item = &GroupId> + Clone {
        let (tail, head) = self.ring.split_at(self.start);
        head.iter().chain(tail.iter())
    }

    /// The groups as a list of their own, from `sd->groups`.
    pub fn to_vec(&self) -> Vec<GroupId> {
        self.iter().copied().collect()
    }

    /// Whether `g` is one of the groups.
    pub fn contains(&self, g: &GroupId) -> bool {
        self.ring.contains(g)
    }

    /// Bytes the shared list takes, for whoever owns it first.
    pub fn list_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.ring)
    }
}

impl std::ops::Index<usize> for GroupRing {
    type Output = GroupId;

    fn index(&self, i: usize) -> &GroupId {
        let n = self.ring.len();
        let j = self.start + i;
        &self.ring[if j >= n { j - n } else { j }]
    }
}

impl<'a> IntoIterator for &'a GroupRing {
    type Item = &'a GroupId;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, GroupId>, std::slice::Iter<'a, GroupId>>;

    fn into_iter(self) -> Self::IntoIter {
        let (tail, head) = self.ring.split_at(self.start);
        head.iter().chain(tail.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotation_shares_the_ring_and_walks_as_its_own_list() {
        let a = GroupRing::from_list(vec![10, 11, 12, 13]);
        let b = a.rotation_for(&[12, 13, 10, 11]).unwrap();
        assert!(b.shares_with(&a));
        assert_eq!(b.to_vec(), [12, 13, 10, 11]);
        assert_eq!((b[0], b[3], b.len()), (12, 11, 4));
        assert_eq!(b.first(), Some(&12));
        assert_eq!((&b).into_iter().copied().collect::<Vec<_>>(), b.to_vec());
        // Not a rotation: the same groups in another cyclic order get a ring of their own.
        assert!(a.rotation_for(&[12, 10, 13, 11]).is_none());
        assert!(a.rotation_for(&[10, 11, 12]).is_none());
        let m = b.mapped(|g| g - 10);
        assert_eq!(m.to_vec(), [2, 3, 0, 1]);
        assert_eq!(m.with_start_of(&a).to_vec(), [0, 1, 2, 3]);
    }
}
