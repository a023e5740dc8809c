// The recurrences of pipelined CG (Ghysels and Vanroose, 2014) without a
// preconditioner, shared by its two forms (pipelined_cg.cpp: a oneTBB flow
// graph over an earlybird Future; pipelined_cg_mpi.cpp: MPI_Iallreduce).
// Per iteration i: reduce the local dots (r,r), (w,r) while q = A w is
// computed (product()), then step(i).
#pragma once

#include "solvers.hpp"

#include <cmath>
#include <span>

namespace cg {

// The vectors and scalars of the recurrences; the caller gives each call
// sole use (the graph's order, or program order).
class Recurrences {
 public:
  Recurrences(const Slab& slab, const Vector& b, Limits limits)
      : slab_(slab), limits_(limits), r_(b), w_(zeros(slab)), q_(zeros(slab)), z_(zeros(slab)), s_(zeros(slab)),
        p_(zeros(slab)), x_(zeros(slab)) {}

  // w = A r (r = b - A 0) and the first local dots.
  void start() {
    apply(slab_, r_, w_);
    dots_[0] = local_dot(slab_, r_, r_);
    dots_[1] = local_dot(slab_, w_, r_);
  }
  void product() { apply(slab_, w_, q_); }
  // Iteration i after the reduction: false once converged (or out of
  // iterations), with the history recorded; else the recurrences and the
  // local dots of iteration i + 1, in one pass over the vectors.
  bool step(int i, std::vector<double>& history) {
    const double gamma = reduced_[0], delta = reduced_[1];
    if (i == 0) b_norm_ = std::sqrt(gamma);
    history.push_back(std::sqrt(gamma) / b_norm_);
    if (std::sqrt(gamma) <= limits_.tolerance * b_norm_ || i >= limits_.max_iterations) return false;
    const double beta = i > 0 ? gamma / gamma_previous_ : 0.0;
    const double alpha = i > 0 ? gamma / (delta - beta * gamma / alpha_previous_) : gamma / delta;
    double rr = 0.0, wr = 0.0;
    for (std::size_t k = slab_.begin(); k < slab_.end(); ++k) {
      z_[k] = q_[k] + beta * z_[k];
      s_[k] = w_[k] + beta * s_[k];
      p_[k] = r_[k] + beta * p_[k];
      x_[k] += alpha * p_[k];
      r_[k] -= alpha * s_[k];
      w_[k] -= alpha * z_[k];
      rr += r_[k] * r_[k];
      wr += w_[k] * r_[k];
    }
    dots_[0] = rr;
    dots_[1] = wr;
    gamma_previous_ = gamma;
    alpha_previous_ = alpha;
    return true;
  }
  std::span<const double> dots() const { return dots_; }
  std::span<double> reduced() { return reduced_; }
  Vector& x() { return x_; }

 private:
  const Slab& slab_;
  Limits limits_;
  Vector r_, w_, q_, z_, s_, p_, x_;
  double dots_[2] = {0, 0}, reduced_[2] = {0, 0};
  double b_norm_ = 1, gamma_previous_ = 1, alpha_previous_ = 1;
};

}  // namespace cg
