#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace sgd {

namespace {

// A stable per-(stream, index) generator: the data do not depend on how many
// samples were drawn before.
std::mt19937_64 generator(std::uint64_t stream, std::uint64_t index) {
  std::seed_seq seed{static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32),
                     static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
  return std::mt19937_64(seed);
}

}  // namespace

Samples make_samples(std::size_t features, std::size_t count, std::uint64_t stream) {
  Samples s;
  s.features = features;
  s.x.resize(count * features);
  s.label.resize(count);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    auto g = generator(stream, i);
    float* x = &s.x[i * features];
    for (std::size_t f = 0; f < features; ++f) x[f] = uniform(g);
    // A nonlinear rule over a few features: a linear model gets part of it.
    const float score = x[0] + x[1] - 1.5f * x[2] * x[3] + 0.5f * std::sin(3.0f * x[4]);
    s.label[i] = score > 0 ? 1.0f : 0.0f;
  }
  return s;
}

Mlp::Mlp(std::vector<std::size_t> widths, std::uint64_t seed) : widths_(std::move(widths)) {
  std::size_t total = 0;
  for (std::size_t l = 0; l < layers(); ++l) total += widths_[l] * widths_[l + 1] + widths_[l + 1];
  params_.assign(total, 0.0f);
  std::mt19937_64 g(seed);
  for (std::size_t l = 0; l < layers(); ++l) {
    std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(widths_[l])));
    float* w = &params_[offset_of(l)];
    for (std::size_t i = 0; i < widths_[l] * widths_[l + 1]; ++i) w[i] = normal(g);
  }
  activations_.resize(widths_.size());
}

// Backward order: the output layer's block first, the first layer's last.
std::size_t Mlp::offset_of(std::size_t layer) const {
  std::size_t offset = 0;
  for (std::size_t l = layers(); l-- > layer + 1;) offset += widths_[l] * widths_[l + 1] + widths_[l + 1];
  return offset;
}

std::vector<std::size_t> Mlp::part_counts() const {
  std::vector<std::size_t> counts;
  for (std::size_t l = layers(); l-- > 0;) counts.push_back(widths_[l] * widths_[l + 1] + widths_[l + 1]);
  return counts;
}

double Mlp::loss_and_gradient(const Samples& data, std::size_t first, std::size_t rows, std::vector<float>* gradient,
                              const std::function<void(std::size_t)>& part_done,
                              const std::function<void(int)>& pause) {
  if (pause) pause(-1);
  // Forward: a[l+1] = act(W_l a[l] + b_l); tanh inside, sigmoid at the output.
  activations_[0].assign(data.x.begin() + static_cast<std::ptrdiff_t>(first * data.features),
                         data.x.begin() + static_cast<std::ptrdiff_t>((first + rows) * data.features));
  for (std::size_t l = 0; l < layers(); ++l) {
    const std::size_t in = widths_[l], out = widths_[l + 1];
    const float* w = &params_[offset_of(l)];
    const float* b = w + in * out;
    auto& next = activations_[l + 1];
    next.assign(rows * out, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      const float* a = &activations_[l][r * in];
      for (std::size_t o = 0; o < out; ++o) {
        const float* wo = w + o * in;
        float z = b[o];
        for (std::size_t i = 0; i < in; ++i) z += wo[i] * a[i];
        next[r * out + o] = l + 1 == layers() ? 1.0f / (1.0f + std::exp(-z)) : std::tanh(z);
      }
    }
  }
  double loss = 0.0;
  const auto& output = activations_.back();
  for (std::size_t r = 0; r < rows; ++r) {
    const float y = data.label[first + r], p = std::clamp(output[r], 1e-7f, 1.0f - 1e-7f);
    loss -= y * std::log(p) + (1 - y) * std::log(1 - p);
  }
  loss /= static_cast<double>(rows);
  if (!gradient) return loss;
  if (pause) pause(0);
  // Backward: delta at the output is (p - y) / rows (sigmoid + cross-entropy).
  std::vector<float> delta(rows), previous;
  for (std::size_t r = 0; r < rows; ++r) delta[r] = (output[r] - data.label[first + r]) / static_cast<float>(rows);
  for (std::size_t l = layers(); l-- > 0;) {
    const std::size_t in = widths_[l], out = widths_[l + 1];
    float* gw = &(*gradient)[offset_of(l)];
    float* gb = gw + in * out;
    std::fill(gw, gb + out, 0.0f);
    const float* w = &params_[offset_of(l)];
    previous.assign(l > 0 ? rows * in : 0, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      const float* a = &activations_[l][r * in];
      for (std::size_t o = 0; o < out; ++o) {
        const float d = delta[r * out + o];
        gb[o] += d;
        float* gwo = gw + o * in;
        for (std::size_t i = 0; i < in; ++i) gwo[i] += d * a[i];
        if (l > 0)
          for (std::size_t i = 0; i < in; ++i) previous[r * in + i] += d * w[o * in + i];
      }
    }
    if (part_done) part_done(layers() - 1 - l);
    if (l > 0) {  // through tanh: derivative 1 - a^2
      for (std::size_t k = 0; k < previous.size(); ++k) previous[k] *= 1.0f - activations_[l][k] * activations_[l][k];
      delta.swap(previous);
    }
  }
  return loss;
}

void Mlp::evaluate(const Samples& data, double& loss, double& accuracy) {
  constexpr std::size_t kRows = 256;
  double total = 0.0;
  std::size_t right = 0;
  for (std::size_t first = 0; first < data.count(); first += kRows) {
    const std::size_t rows = std::min(kRows, data.count() - first);
    total += loss_and_gradient(data, first, rows, nullptr) * static_cast<double>(rows);
    for (std::size_t r = 0; r < rows; ++r) right += (activations_.back()[r] > 0.5f) == (data.label[first + r] > 0.5f);
  }
  loss = total / static_cast<double>(data.count());
  accuracy = static_cast<double>(right) / static_cast<double>(data.count());
}

}  // namespace sgd
