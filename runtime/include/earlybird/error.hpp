// Error: every failure earlybird reports — a collective's (through its
// Future), a bad argument to the monitoring calls, a malformed environment
// variable — is an earlybird::Error whose message names the call, the rank
// and the cause.
#pragma once

#include <stdexcept>

namespace earlybird {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  ~Error() override;
};

}  // namespace earlybird
