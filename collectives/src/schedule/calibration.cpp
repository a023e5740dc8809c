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

// `model` with one cost 1 and every other 0 (its structure kept: cores,
// levels, transfers on the CPU).
CostModel unit(CostModel model, double CostModel::*cost) {
  model.alpha = model.beta = model.gamma = model.copy_per_byte = model.per_step = model.gamma_apart = 0;
  model.*cost = 1;
  return model;
}

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

struct LinearFit {
  std::vector<double> x;  // empty: no subset fits with every value >= 0
  double residual = INFINITY;  // sum of squared errors
};

// The least-squares fit of rows x = y with the least residual over every
// subset of the three columns, none negative (the others 0).
LinearFit best_non_negative_fit(const std::vector<Row>& rows, const std::vector<double>& y) {
  LinearFit best;
  for (int mask = 1; mask < 8; ++mask) {
    const std::vector<double> x = least_squares(rows, y, {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0});
    if (x.empty() || *std::min_element(x.begin(), x.end()) < 0) continue;
    double residual = 0;
    for (std::size_t r = 0; r < rows.size(); ++r)
      residual += std::pow(x[0] * rows[r][0] + x[1] * rows[r][1] + x[2] * rows[r][2] - y[r], 2);
    if (residual < best.residual) best = {x, residual};
  }
  return best;
}

// per_call, alpha, per_step: the non-negative fit with the least residual
// over every subset of the three parameters, under `model`'s byte costs.
void fit_latency(const std::vector<TimedAllreduce>& small, int ranks, const CostModel& model, LevelCosts& costs) {
  std::vector<Row> rows;
  std::vector<double> y;
  CostModel bytes_only = model;
  bytes_only.alpha = bytes_only.per_step = 0;
  for (const TimedAllreduce& call : small) {  // every row divided by the measured time: relative errors
    rows.push_back({1.0 / call.seconds, simulated(call, ranks, unit(model, &CostModel::alpha)) / call.seconds,
                    simulated(call, ranks, unit(model, &CostModel::per_step)) / call.seconds});
    y.push_back(1.0 - simulated(call, ranks, bytes_only) / call.seconds);
  }
  const LinearFit fit = best_non_negative_fit(rows, y);
  if (fit.x.empty()) return;
  costs.per_call = fit.x[0];
  costs.model.alpha = fit.x[1];
  costs.model.per_step = fit.x[2];
}

CostModel with_rates(CostModel model, const LocalRates& rates) {
  model.gamma = rates.gamma;
  model.copy_per_byte = rates.copy;
  model.gamma_apart = rates.gamma_apart;
  return model;
}

struct BetaFit {
  double beta = 0;
  double residual = 0;  // sum of squared relative errors
  std::size_t calls = 0;
};

// One beta for `calls` under `model` (alpha, per_step and the rates; its beta
// ignored) and per_call: least squares of the relative error through 0.
BetaFit fit_beta(const std::vector<const TimedAllreduce*>& calls, int ranks, CostModel model, double per_call) {
  model.beta = 0;
  struct Terms {
    double rest, per_beta, seconds;
  };
  std::vector<Terms> terms;
  double num = 0, den = 0;
  for (const TimedAllreduce* call : calls) {
    const Terms t{call->seconds - per_call - simulated(*call, ranks, model),
                  simulated(*call, ranks, unit(model, &CostModel::beta)), call->seconds};
    const double weight = 1 / (t.seconds * t.seconds);
    num += weight * t.per_beta * t.rest;
    den += weight * t.per_beta * t.per_beta;
    terms.push_back(t);
  }
  BetaFit fit;
  fit.beta = den > 0 ? std::max(0.0, num / den) : 0;
  fit.calls = calls.size();
  for (const Terms& t : terms) fit.residual += std::pow((fit.beta * t.per_beta - t.rest) / t.seconds, 2);
  return fit;
}

double rms(const BetaFit& a, const BetaFit& b = {}) {
  const std::size_t calls = a.calls + b.calls;
  return calls ? std::sqrt((a.residual + b.residual) / static_cast<double>(calls)) : 0;
}

double footprint(const TimedAllreduce& call, int ranks) { return static_cast<double>(call.bytes) * ranks; }

// beta, one regime or two (fit_level).
void fit_bandwidth(const std::vector<TimedAllreduce>& large, int ranks, const LocalRates& in_cache,
                   const LocalRates& in_memory, LevelCosts& costs) {
  std::vector<const TimedAllreduce*> all;
  std::vector<double> sizes;
  for (const TimedAllreduce& call : large) {
    all.push_back(&call);
    sizes.push_back(footprint(call, ranks));
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  const BetaFit one = fit_beta(all, ranks, with_rates(costs.model, in_memory), costs.per_call);
  BetaFit best_cache, best_memory;
  double best_from = 0, best_rms = INFINITY;
  for (std::size_t k = 1; k < sizes.size(); ++k) {  // the memory regime from sizes[k]
    std::vector<const TimedAllreduce*> cached, uncached;
    for (const TimedAllreduce* call : all) (footprint(*call, ranks) < sizes[k] ? cached : uncached).push_back(call);
    const BetaFit cache = fit_beta(cached, ranks, with_rates(costs.model, in_cache), costs.per_call);
    const BetaFit memory = fit_beta(uncached, ranks, with_rates(costs.model, in_memory), costs.per_call);
    if (rms(cache, memory) < best_rms) {
      best_rms = rms(cache, memory);
      best_cache = cache;
      best_memory = memory;
      best_from = std::sqrt(sizes[k - 1] * sizes[k]);
    }
  }
  if (rms(one) > kOneRegimeTolerance && best_rms <= kSplitGain * rms(one)) {
    costs.model = with_rates(costs.model, in_cache);
    costs.model.beta = best_cache.beta;
    costs.memory = {.from_bytes = best_from,
                    .beta = best_memory.beta,
                    .gamma = in_memory.gamma,
                    .copy = in_memory.copy,
                    .gamma_apart = std::max(in_memory.gamma_apart, 0.0)};
  } else {
    costs.model = with_rates(costs.model, in_memory);
    costs.model.beta = one.beta;
    costs.memory = {};
  }
}

}  // namespace

void fit_level(const std::vector<TimedAllreduce>& small, const std::vector<TimedAllreduce>& large, int ranks,
               const LocalRates& in_cache, const LocalRates& in_memory, LevelCosts& costs, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    if (!small.empty()) fit_latency(small, ranks, with_rates(costs.model, in_cache), costs);
    if (!large.empty()) fit_bandwidth(large, ranks, in_cache, in_memory, costs);
  }
}

namespace {

double predicted_peer_reads(const TimedAllreduce& call, int ranks, const LevelCosts& costs, double peer_read,
                            double memory_peer_read, double read_call) {
  LevelCosts c = costs;
  c.peer_read = peer_read;
  c.memory.peer_read = memory_peer_read;
  c.read_call = read_call;
  return predict_peer_reads(Collective::allreduce, ranks, call.bytes / kElemBytes, kElemBytes, c);
}

}  // namespace

double fit_peer_reads(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs) {
  // The prediction is linear in the three parameters (a call past the caches
  // reads at memory.peer_read, the others at peer_read): its coefficients
  // are differences against all at 0; rows divided by the measured time.
  // Where no call is past the caches (or the level has no memory regime),
  // the second column is 0 and every subset using it is singular.
  std::vector<Row> rows;
  std::vector<double> y;
  for (const TimedAllreduce& call : calls) {
    const double base = predicted_peer_reads(call, ranks, costs, 0, 0, 0);
    const bool past = costs.past_caches(call.bytes, ranks);
    const double per_byte = predicted_peer_reads(call, ranks, costs, 1, 1, 0) - base;
    rows.push_back({past ? 0 : per_byte / call.seconds, past ? per_byte / call.seconds : 0,
                    (predicted_peer_reads(call, ranks, costs, 0, 0, 1) - base) / call.seconds});
    y.push_back(1.0 - base / call.seconds);
  }
  const LinearFit fit = best_non_negative_fit(rows, y);
  costs.peer_read = costs.memory.peer_read = costs.read_call = 0;
  if (calls.empty() || fit.x.empty()) return 0;
  costs.peer_read = fit.x[0];
  costs.memory.peer_read = fit.x[1];
  costs.read_call = fit.x[2];
  // No call in cache: the one rate measured serves both.
  if (costs.peer_read == 0) std::swap(costs.peer_read, costs.memory.peer_read);
  return std::sqrt(fit.residual / static_cast<double>(calls.size()));
}

double fit_inline_lines(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs) {
  // Linear in the two: rows are the prediction with one of them 1 and the
  // other 0, less the prediction with both 0 (the folds), divided by the
  // measured time.
  const auto predicted = [&](const TimedAllreduce& call, double inline_call, double inline_line) {
    LevelCosts c = costs;
    c.inline_call = inline_call;
    c.inline_line = inline_line;
    return predict_inline_lines(Collective::allreduce, ranks, call.bytes / kElemBytes, kElemBytes, c);
  };
  std::vector<Row> rows;
  std::vector<double> y;
  for (const TimedAllreduce& call : calls) {
    const double base = predicted(call, 0, 0);
    rows.push_back({(predicted(call, 1, 0) - base) / call.seconds, (predicted(call, 0, 1) - base) / call.seconds, 0});
    y.push_back(1.0 - base / call.seconds);
  }
  const LinearFit fit = best_non_negative_fit(rows, y);
  costs.inline_call = costs.inline_line = 0;
  if (calls.empty() || fit.x.empty()) return 0;
  costs.inline_call = fit.x[0];
  costs.inline_line = fit.x[1];
  return std::sqrt(fit.residual / static_cast<double>(calls.size()));
}

namespace {

// A cost added to predictions: the value c >= 0 with the least squares of the
// relative errors (base[i] + c * per[i]) / measured[i] - 1 (linear in c, its
// coefficient per[i] / measured[i]), and their RMS at that value.
struct AddedCost {
  double value = 0;
  double error = 0;
};

AddedCost fit_added_cost(const std::vector<double>& base, const std::vector<double>& per,
                         const std::vector<double>& measured) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double a = per[i] / measured[i], b = 1 - base[i] / measured[i];
    num += a * b;
    den += a * a;
  }
  AddedCost fit;
  fit.value = den > 0 ? std::max(0.0, num / den) : 0;
  double sum = 0;
  for (std::size_t i = 0; i < measured.size(); ++i)
    sum += std::pow((base[i] + fit.value * per[i]) / measured[i] - 1, 2);
  fit.error = measured.empty() ? 0 : std::sqrt(sum / static_cast<double>(measured.size()));
  return fit;
}

}  // namespace

double fit_board_cost(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs,
                      double LevelCosts::*board) {
  costs.*board = 0;
  std::vector<double> schedule, once, measured;
  for (const TimedAllreduce& call : calls) {
    const Algorithm* algorithm = find_algorithm(Collective::allreduce, call.algorithm);
    if (!algorithm) throw std::invalid_argument("calibration: no allreduce algorithm '" + call.algorithm + "'");
    schedule.push_back(predict_entry(Collective::allreduce, *algorithm, ranks, call.bytes / kElemBytes, kElemBytes, costs));
    once.push_back(1);
    measured.push_back(call.seconds);
  }
  const AddedCost fit = fit_added_cost(schedule, once, measured);
  costs.*board = fit.value;
  return fit.error;
}

double fit_line_wait(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs) {
  const auto predicted = [&](const TimedAllreduce& call, double line_wait) {
    LevelCosts c = costs;
    c.line_wait = line_wait;
    return predict_peer_reads(Collective::allreduce, ranks, call.bytes / kElemBytes, kElemBytes, c, true);
  };
  std::vector<double> without, per_wait, measured;
  for (const TimedAllreduce& call : calls) {
    without.push_back(predicted(call, 0));
    per_wait.push_back(predicted(call, 1) - without.back());
    measured.push_back(call.seconds);
  }
  const AddedCost fit = fit_added_cost(without, per_wait, measured);
  costs.line_wait = fit.value;
  return fit.error;
}

namespace {

double log_error_rms(const std::vector<TimedAllreduce>& calls, int ranks, const LevelCosts& costs) {
  double sum = 0;
  for (const TimedAllreduce& call : calls) {
    const Algorithm* algorithm = find_algorithm(Collective::allreduce, call.algorithm);
    if (!algorithm) throw std::invalid_argument("calibration: no allreduce algorithm '" + call.algorithm + "'");
    const double predicted = predict(*algorithm, ranks, call.bytes / kElemBytes, kElemBytes, costs);
    sum += std::pow(std::log(predicted / call.seconds), 2);
  }
  return calls.empty() ? 0 : std::sqrt(sum / static_cast<double>(calls.size()));
}

}  // namespace

double fit_wake(const std::vector<TimedAllreduce>& calls, int ranks, int cores, LevelCosts& costs) {
  costs.model.cores = cores;
  auto error_at = [&](double wake) {
    costs.wake = wake;
    return log_error_rms(calls, ranks, costs);
  };
  double best = 0, best_error = error_at(0);
  auto consider = [&](double wake) {
    if (const double e = error_at(wake); e < best_error) {
      best_error = e;
      best = wake;
    }
  };
  // Each prediction is linear in the wake, its log error not: a geometric
  // scan, then a linear one between the scan's neighbours of its best point.
  constexpr double kFirst = 1e-7, kRatio = 1.1;
  for (double wake = kFirst; wake <= kMaxWake; wake *= kRatio) consider(wake);
  const double low = best / kRatio, high = best > 0 ? best * kRatio : kFirst;
  constexpr int kFinePoints = 64;
  for (int i = 0; i <= kFinePoints; ++i) consider(low + (high - low) * i / kFinePoints);
  costs.wake = best;
  return best_error;
}

}  // namespace earlybird::coll
