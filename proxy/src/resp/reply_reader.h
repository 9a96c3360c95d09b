// Small readers for the few replies the proxy must look inside (merges, CLUSTER SLOTS, errors).
// They take one complete reply (as framed by ReplyScanner) and never allocate beyond `out`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sp::resp {

// ":<n>\r\n" -> n. False for any other type or a malformed number.
bool readInteger(std::string_view reply, int64_t* out);

// "*<n>\r\n<e1>...<en>" -> the n complete element replies (each its own bytes). False for a
// non-array, a null array, or malformed contents.
bool readArrayElements(std::string_view reply, std::vector<std::string_view>* out);

// "$<n>\r\n<payload>\r\n" -> payload; "+text\r\n" -> text. False otherwise (null included).
bool readString(std::string_view reply, std::string_view* out);

// True when the reply is an error ('-' or RESP3 '!').
inline bool isError(std::string_view reply) {
  return !reply.empty() && (reply[0] == '-' || reply[0] == '!');
}

}  // namespace sp::resp
