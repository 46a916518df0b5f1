// The usual std::visit helper: a set of lambdas as one overloaded callable.
#pragma once

namespace egw {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace egw
