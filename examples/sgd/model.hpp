// The model eb-sgd trains: a small multilayer perceptron (tanh hidden
// layers, a sigmoid output, binary cross-entropy) on a synthetic binary
// classification task generated deterministically (no download). Its
// parameters and gradients are one flat vector laid out in the order the
// backward pass finishes the layers — output layer first — so that each
// layer's gradient is one consecutive part of it (a partitioned allreduce's
// part).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace sgd {

// Samples: `features` inputs in [-1, 1] and a 0/1 label from a fixed
// nonlinear rule, the same for every (stream, index) on every machine.
struct Samples {
  std::size_t features = 0;
  std::vector<float> x;      // count x features
  std::vector<float> label;  // count
  std::size_t count() const { return label.size(); }
};
Samples make_samples(std::size_t features, std::size_t count, std::uint64_t stream);

class Mlp {
 public:
  // Layer widths from input to output, e.g. {32, 128, 128, 1}; weights drawn
  // from `seed` (the same on every rank).
  Mlp(std::vector<std::size_t> widths, std::uint64_t seed);

  std::size_t parameter_count() const { return params_.size(); }
  std::vector<float>& parameters() { return params_; }
  std::size_t layers() const { return widths_.size() - 1; }
  // The element counts of the gradient's parts, in backward order (part 0 =
  // the output layer).
  std::vector<std::size_t> part_counts() const;

  // Mean loss of `rows` samples from `first`, and (with `gradient`) its
  // gradient, written part by part; `part_done(k)` is called as soon as part
  // k is final. `pause(k)` is called before the forward pass (k = -1) and
  // before the backward pass (k = 0): where eb-sgd injects imbalance.
  double loss_and_gradient(const Samples& data, std::size_t first, std::size_t rows, std::vector<float>* gradient,
                           const std::function<void(std::size_t)>& part_done = {},
                           const std::function<void(int)>& pause = {});
  // Mean loss and the fraction classified right over all of `data`.
  void evaluate(const Samples& data, double& loss, double& accuracy);

 private:
  std::size_t offset_of(std::size_t layer) const;  // of layer l's weights, then its biases
  std::vector<std::size_t> widths_;
  std::vector<float> params_;
  std::vector<std::vector<float>> activations_;  // per layer boundary, rows x width
};

}  // namespace sgd
