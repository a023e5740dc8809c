// Binding: which rank stands at each virtual rank of the plan an Operation
// runs, and — for arrival-ordered collectives — which plan that is. The
// executor asks only this interface; where the answers come from (a root, an
// arrival decision, arrival tickets) lives with whoever made the binding.
//
// state       decided()  bound()  rank_of(v)
// deciding    false      false    not asked (the plan is not known yet)
// binding     true       false    a rank, or -1 while v has not arrived
// bound       true       true     a rank for every v
//
// A static binding (every collective that is not arrival-ordered) starts
// bound. Drive holder only (exec/driver.hpp), except decided_plan()/rank_of()
// after bound.
#pragma once

#include <earlybird/collectives/plan.hpp>

#include <memory>
#include <string>

namespace earlybird {

class Binding {
 public:
  virtual ~Binding() = default;
  // The operation starts (it exchanges data with peers). Returns decided().
  virtual bool begin() { return true; }
  // Learns what is still unknown (the decision, ranks that arrived since).
  // Returns whether anything new was learnt. Cheap to call when bound.
  virtual bool refresh() { return false; }
  virtual bool decided() const { return true; }
  virtual bool bound() const { return true; }
  // The plan to run once decided; nullptr: the plan the operation was made with.
  virtual std::shared_ptr<const coll::RankPlan> decided_plan() { return nullptr; }
  // The rank at virtual rank `v`; -1 while unknown.
  virtual int rank_of(int virtual_rank) const = 0;
  // Why the operation cannot start yet, for the watchdog's message.
  virtual std::string undecided_reason() const { return ""; }
  // Called once when the operation finished successfully.
  virtual void finished() {}
};

// Schedules are written for root 0; a root's rotation turns them into a
// schedule for that root. Over nodes of n consecutive ranks (N = P / n) it
// rotates whole nodes and the positions inside a node alike:
//   rank_of(v) = ((v / n + root / n) mod N) n + (v + root) mod n
// so virtual rank 0 is the root and every node is still a block of n
// consecutive virtual ranks, the layout the hierarchical generators and
// the model's two levels (coll::spanning_nodes) assume: a binomial bcast
// from root 1 on 2 nodes x 2 ranks crosses between the nodes once, not
// three times as v -> (v + 1) mod 4 made it. With n = 0 (one node, or
// nodes of unequal sizes), n = 1 or n = P it is v -> (v + root) mod P.
struct RootRotation {
  RootRotation(int ranks, int root, int node_ranks)
      : ranks_(ranks), root_(root), n_(node_ranks > 0 && ranks % node_ranks == 0 ? node_ranks : ranks) {}
  int rank_of(int virtual_rank) const {
    const int nodes = ranks_ / n_;
    return ((virtual_rank / n_ + root_ / n_) % nodes) * n_ + (virtual_rank % n_ + root_ % n_) % n_;
  }
  int virtual_of(int rank) const {
    const int nodes = ranks_ / n_;
    return ((rank / n_ - root_ / n_ + nodes) % nodes) * n_ + (rank % n_ - root_ % n_ + n_) % n_;
  }

 private:
  int ranks_, root_, n_;
};

class StaticBinding final : public Binding {
 public:
  StaticBinding(int ranks, int root, int node_ranks) : rotation_(ranks, root, node_ranks) {}
  int rank_of(int virtual_rank) const override { return rotation_.rank_of(virtual_rank); }

 private:
  RootRotation rotation_;
};

}  // namespace earlybird
