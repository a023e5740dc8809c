#include <earlybird/collectives/calibration.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace earlybird::coll {
namespace {

constexpr std::size_t kElemBytes = 4;  // float32

double simulated(const TimedAllreduce& call, int ranks, const CostModel& model) {
  const Algorithm* algorithm = find_algorithm(Collective::allreduce, call.algorithm);
  if (!algorithm) throw std::invalid_argument("calibration: no allreduce algorithm '" + call.algorithm + "'");
  return predict(*algorithm, ranks, call.bytes / kElemBytes, kElemBytes, LevelCosts{model, 0});
}

// A model with one parameter 1 and every other 0.
CostModel unit_alpha() { return CostModel{1, 0, 0, 0, 0}; }
CostModel unit_beta() { return CostModel{0, 1, 0, 0, 0}; }
CostModel unit_per_step() { return CostModel{0, 0, 0, 0, 1}; }

using Row = std::array<double, 3>;  // per_call, alpha, per_step coefficients

// Solves the normal equations of min |A x - y| over the columns `used`
// (Gaussian elimination with partial pivoting; 3 unknowns at most); the
// other unknowns are 0. Empty when the used columns are collinear.
std::vector<double> least_squares(const std::vector<Row>& rows, const std::vector<double>& y,
                                  const std::array<bool, 3>& used) {
  std::vector<int> cols;
  for (int c = 0; c < 3; ++c)
    if (used[c]) cols.push_back(c);
  const std::size_t k = cols.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) m[i][j] += rows[r][cols[i]] * rows[r][cols[j]];
      m[i][k] += rows[r][cols[i]] * y[r];
    }
  for (std::size_t p = 0; p < k; ++p) {
    std::size_t pivot = p;
    for (std::size_t i = p + 1; i < k; ++i)
      if (std::abs(m[i][p]) > std::abs(m[pivot][p])) pivot = i;
    std::swap(m[p], m[pivot]);
    if (std::abs(m[p][p]) < 1e-30) return {};
    for (std::size_t i = 0; i < k; ++i)
      if (i != p) {
        const double f = m[i][p] / m[p][p];
        for (std::size_t j = p; j <= k; ++j) m[i][j] -= f * m[p][j];
      }
  }
  std::vector<double> x(3, 0);
  for (std::size_t i = 0; i < k; ++i) x[cols[i]] = m[i][k] / m[i][i];
  return x;
}

// per_call, alpha, per_step: the non-negative fit with the least residual
// over every subset of the three parameters.
void fit_latency(const std::vector<TimedAllreduce>& small, int ranks, LevelCosts& costs) {
  std::vector<Row> rows;
  std::vector<double> y;
  CostModel bytes_only = costs.model;  // gamma, copy and the current beta
  bytes_only.alpha = bytes_only.per_step = 0;
  for (const TimedAllreduce& call : small) {  // every row divided by the measured time: relative errors
    rows.push_back({1.0 / call.seconds, simulated(call, ranks, unit_alpha()) / call.seconds,
                    simulated(call, ranks, unit_per_step()) / call.seconds});
    y.push_back(1.0 - simulated(call, ranks, bytes_only) / call.seconds);
  }
  double best_residual = INFINITY;
  for (int mask = 1; mask < 8; ++mask) {
    const std::array<bool, 3> used{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    const std::vector<double> x = least_squares(rows, y, used);
    if (x.empty() || *std::min_element(x.begin(), x.end()) < 0) continue;
    double residual = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double e = x[0] * rows[r][0] + x[1] * rows[r][1] + x[2] * rows[r][2] - y[r];
      residual += e * e;
    }
    if (residual < best_residual) {
      best_residual = residual;
      costs.per_call = x[0];
      costs.model.alpha = x[1];
      costs.model.per_step = x[2];
    }
  }
}

void fit_beta(const std::vector<TimedAllreduce>& large, int ranks, LevelCosts& costs) {
  CostModel without_beta = costs.model;
  without_beta.beta = 0;
  double num = 0, den = 0;
  for (const TimedAllreduce& call : large) {
    const double rest = call.seconds - costs.per_call - simulated(call, ranks, without_beta);
    const double per_beta = simulated(call, ranks, unit_beta());
    const double weight = 1 / (call.seconds * call.seconds);
    num += weight * per_beta * rest;
    den += weight * per_beta * per_beta;
  }
  costs.model.beta = den > 0 ? std::max(0.0, num / den) : 0;
}

}  // namespace

void fit_level(const std::vector<TimedAllreduce>& small, const std::vector<TimedAllreduce>& large, int ranks,
               LevelCosts& costs, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    if (!small.empty()) fit_latency(small, ranks, costs);
    if (!large.empty()) fit_beta(large, ranks, costs);
  }
}

}  // namespace earlybird::coll
