#include "arrival_board.hpp"

#include <earlybird/error.hpp>

#include <string>

namespace earlybird::pap {
namespace {

// Times are stored biased so that slightly negative ones (clock error near
// the origin) survive: payload = us + 2^39, clamped to 40 bits.
constexpr std::int64_t kTimeBias = std::int64_t{1} << (kPayloadBits - 1);

std::uint64_t encode_time(std::int64_t us) {
  const std::int64_t biased = us + kTimeBias;
  if (biased < 0) return 0;
  return static_cast<std::uint64_t>(biased) > kPayloadMask ? kPayloadMask : static_cast<std::uint64_t>(biased);
}
std::int64_t decode_time(std::uint64_t payload) { return static_cast<std::int64_t>(payload) - kTimeBias; }

constexpr int kRankBits = 20;
constexpr std::uint64_t kRankMask = (std::uint64_t{1} << kRankBits) - 1;

}  // namespace

ArrivalBoard::ArrivalBoard(Transport& transport, const WindowLayout& layout)
    : transport_(&transport), ranks_(static_cast<std::size_t>(layout.ranks)) {}

std::vector<std::uint64_t> ArrivalBoard::read(std::size_t index, std::size_t count) {
  std::vector<std::uint64_t> words(count);
  transport_->load_remote_words(0, word(index), words.data(), count);
  return words;
}

int ArrivalBoard::take_ticket(std::uint64_t epoch) {
  const std::uint64_t value = transport_->fetch_add(0, WindowLayout::kTicketCounterOffset, 1);
  const std::uint64_t first = epoch * ranks_;
  if (value < first || value >= first + ranks_)
    throw Error("arrival ticket " + std::to_string(value) + " is outside epoch " + std::to_string(epoch) +
                " (ranks disagree on the sequence of arrival-ordered collectives)");
  return static_cast<int>(value - first);
}

void ArrivalBoard::record_arrival(std::uint64_t epoch, int ticket, std::int64_t arrival_us) {
  const std::uint64_t holder = tagged(epoch, static_cast<std::uint64_t>(transport_->rank()));
  const std::uint64_t time = tagged(epoch, encode_time(arrival_us));
  // This rank's next ticket (a round trip to rank 0) comes after them.
  transport_->post_remote_words(0, word(tickets_at(epoch) + static_cast<std::size_t>(ticket)), &holder, 1);
  transport_->post_remote_words(0, word(arrivals_at(epoch) + static_cast<std::size_t>(transport_->rank())), &time, 1);
}

std::vector<int> ArrivalBoard::ticket_holders(std::uint64_t epoch) {
  std::vector<int> holders(ranks_, -1);
  const auto words = read(tickets_at(epoch), ranks_);
  for (std::size_t t = 0; t < ranks_; ++t)
    if (auto rank = payload_if(words[t], epoch)) holders[t] = static_cast<int>(*rank);
  return holders;
}

std::vector<std::optional<std::int64_t>> ArrivalBoard::times(std::size_t index, std::uint64_t number) {
  std::vector<std::optional<std::int64_t>> out(ranks_);
  const auto words = read(index, ranks_);
  for (std::size_t r = 0; r < ranks_; ++r)
    if (auto payload = payload_if(words[r], number)) out[r] = decode_time(*payload);
  return out;
}

std::vector<std::optional<std::int64_t>> ArrivalBoard::arrivals(std::uint64_t epoch) {
  return times(arrivals_at(epoch), epoch);
}

void ArrivalBoard::publish_decision(std::uint64_t epoch, const Decision& decision) {
  std::vector<std::uint64_t> words(ranks_ + 1);
  words[0] = tagged(epoch, decision.algorithm);
  for (std::size_t id = 0; id < ranks_; ++id) {
    const auto rank = static_cast<std::uint64_t>(decision.order[id]);
    const std::uint64_t k = decision.presteps.empty() ? 0 : decision.presteps[id];
    words[id + 1] = tagged(epoch, (k << kRankBits) | rank);
  }
  transport_->post_remote_words(0, word(decision_at(epoch)), words.data(), words.size());
}

std::optional<Decision> ArrivalBoard::decision(std::uint64_t epoch) {
  const auto words = read(decision_at(epoch), ranks_ + 1);
  Decision out;
  const auto algorithm = payload_if(words[0], epoch);
  if (!algorithm) return std::nullopt;
  out.algorithm = static_cast<std::uint32_t>(*algorithm);
  for (std::size_t id = 0; id < ranks_; ++id) {
    const auto entry = payload_if(words[id + 1], epoch);
    if (!entry) return std::nullopt;  // the decider is still writing
    out.order.push_back(static_cast<int>(*entry & kRankMask));
    out.presteps.push_back(static_cast<std::uint32_t>(*entry >> kRankBits));
  }
  return out;
}

void ArrivalBoard::publish_estimate(std::uint64_t call, std::int64_t arrival_us) {
  const std::uint64_t value = tagged(call, encode_time(arrival_us));
  transport_->post_remote_words(0, word(estimates_at(call) + static_cast<std::size_t>(transport_->rank())), &value, 1);
}

std::vector<std::optional<std::int64_t>> ArrivalBoard::estimates(std::uint64_t call) {
  return times(estimates_at(call), call);
}

}  // namespace earlybird::pap
