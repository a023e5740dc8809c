#include <earlybird/types.hpp>

#include "reduce_kernels.hpp"

namespace earlybird {

std::size_t size_of(Datatype type) {
  switch (type) {
    case Datatype::int8: case Datatype::uint8: return 1;
    case Datatype::int16: case Datatype::uint16: return 2;
    case Datatype::int32: case Datatype::uint32: case Datatype::float32: return 4;
    case Datatype::int64: case Datatype::uint64: case Datatype::float64: return 8;
  }
  return 0;
}

const char* to_string(Datatype type) {
  switch (type) {
    case Datatype::int8: return "int8";
    case Datatype::int16: return "int16";
    case Datatype::int32: return "int32";
    case Datatype::int64: return "int64";
    case Datatype::uint8: return "uint8";
    case Datatype::uint16: return "uint16";
    case Datatype::uint32: return "uint32";
    case Datatype::uint64: return "uint64";
    case Datatype::float32: return "float32";
    case Datatype::float64: return "float64";
  }
  return "?";
}

const char* to_string(Op op) {
  switch (op) {
    case Op::sum: return "sum";
    case Op::prod: return "prod";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::land: return "land";
    case Op::lor: return "lor";
    case Op::lxor: return "lxor";
    case Op::band: return "band";
    case Op::bor: return "bor";
    case Op::bxor: return "bxor";
  }
  return "?";
}

bool op_supports(Op op, Datatype type) {
  const bool floating = type == Datatype::float32 || type == Datatype::float64;
  switch (op) {
    case Op::sum: case Op::prod: case Op::min: case Op::max: return true;
    default: return !floating;
  }
}

std::string ReduceOp::name() const { return is_user() ? user_->name : to_string(builtin_); }

bool ReduceOp::supports(Datatype type) const { return is_user() ? type == user_->type : op_supports(builtin_, type); }

void ReduceOp::apply(Datatype type, void* out, const void* left, const void* right, std::size_t n) const {
  if (is_user())
    user_->fn(left, right, out, n);
  else
    kernels::reduce(type, builtin_, out, left, right, n);
}

}  // namespace earlybird
