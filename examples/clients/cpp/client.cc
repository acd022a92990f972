// A C++ client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
// stubs `make stubs LANG=cpp` writes (protoc 3.21 with Debian's libprotobuf 3.21). It reads a Pod,
// a PodList and three watch events, and creates a ConfigMap — every body as
// application/vnd.kubernetes.protobuf. HTTP/1.1 is spoken by hand over a socket, so that every byte
// is visible: headers, chunked bodies, then the Kubernetes framing inside them.
//
//   ./client 127.0.0.1 8080 default
//
// Build: g++ -std=c++17 -Ulinux (the "linux" field of core/v1 would meet GNU C++'s linux macro).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>

#include "k8s/io/api/core/v1/types.pb.h"

namespace core = k8s::io::api::core::v1;
namespace meta = k8s::io::apimachinery::pkg::apis::meta::v1;
namespace runtime = k8s::io::apimachinery::pkg::runtime;

const std::string kProtobuf = "application/vnd.kubernetes.protobuf";
// Every protobuf body starts with "k8s" and a zero byte.
const std::string kMagic("k8s\0", 4);

// One HTTP/1.1 connection; reads the response head, then the body as it comes (chunked or sized).
class Connection {
 public:
  Connection(const std::string& host, int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    inet_pton(AF_INET, host.c_str(), &address.sin_addr);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) throw std::runtime_error("connect");
  }
  ~Connection() { close(fd_); }

  void Send(const std::string& method, const std::string& path, const std::string& body = "") {
    std::string head = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nAccept: " + kProtobuf + "\r\n";
    if (!body.empty()) head += "Content-Type: " + kProtobuf + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    head += "Connection: close\r\n\r\n" + body;
    write(fd_, head.data(), head.size());
    std::string head_in = ReadUntil("\r\n\r\n");
    for (char& c : head_in) c = std::tolower(static_cast<unsigned char>(c));  // header names ignore case
    status_ = std::stoi(head_in.substr(9, 3));
    chunked_ = head_in.find("transfer-encoding: chunked") != std::string::npos;
    auto length = head_in.find("content-length: ");
    remaining_ = length == std::string::npos ? -1 : std::stol(head_in.substr(length + 16));
  }

  // The next n bytes of the body (across chunk boundaries).
  std::string Body(size_t n) {
    std::string out;
    while (out.size() < n) {
      if (chunked_ && chunk_left_ == 0) {
        std::string size_line = ReadUntil("\r\n");
        if (size_line == "\r\n") size_line = ReadUntil("\r\n");  // the CRLF after a chunk
        chunk_left_ = std::stoul(size_line, nullptr, 16);
        if (chunk_left_ == 0) throw std::runtime_error("body ended");
      }
      size_t take = n - out.size();
      if (chunked_ && take > chunk_left_) take = chunk_left_;
      out += Raw(take);
      if (chunked_) chunk_left_ -= take;
    }
    return out;
  }

  // The whole body of a sized response.
  std::string All() { return chunked_ ? throw std::runtime_error("chunked") : Body(remaining_); }
  int status() const { return status_; }

 private:
  std::string Raw(size_t n) {
    std::string out;
    while (out.size() < n) {
      if (buffer_.empty()) Fill();
      size_t take = std::min(n - out.size(), buffer_.size());
      out += buffer_.substr(0, take);
      buffer_.erase(0, take);
    }
    return out;
  }
  std::string ReadUntil(const std::string& end) {
    while (buffer_.find(end) == std::string::npos) Fill();
    size_t at = buffer_.find(end) + end.size();
    std::string out = buffer_.substr(0, at);
    buffer_.erase(0, at);
    return out;
  }
  void Fill() {
    char data[65536];
    ssize_t got = read(fd_, data, sizeof data);
    if (got <= 0) throw std::runtime_error("connection closed");
    buffer_.append(data, got);
  }
  int fd_, status_ = 0;
  bool chunked_ = false;
  long remaining_ = -1;
  size_t chunk_left_ = 0;
  std::string buffer_;
};

// Open an envelope: the magic, then a runtime.Unknown whose raw field holds the object.
runtime::Unknown Unwrap(const std::string& body) {
  if (body.compare(0, 4, kMagic) != 0) throw std::runtime_error("no k8s\\x00 envelope: " + body);
  runtime::Unknown unknown;
  if (!unknown.ParseFromString(body.substr(4))) throw std::runtime_error("not a runtime.Unknown");
  return unknown;
}

// Put an object into an envelope, naming its apiVersion and kind.
std::string Wrap(const google::protobuf::Message& object, const std::string& api_version, const std::string& kind) {
  runtime::Unknown unknown;
  unknown.mutable_typemeta()->set_apiversion(api_version);
  unknown.mutable_typemeta()->set_kind(kind);
  unknown.set_raw(object.SerializeAsString());
  return kMagic + unknown.SerializeAsString();
}

int main(int argc, char** argv) {
  std::string host = argv[1], base = std::string("/api/v1/namespaces/") + argv[3];
  int port = std::stoi(argv[2]);

  Connection get_pod(host, port);
  get_pod.Send("GET", base + "/pods/web");
  core::Pod pod;
  pod.ParseFromString(Unwrap(get_pod.All()).raw());
  std::cout << "pod " << pod.metadata().name() << " image " << pod.spec().containers(0).image() << "\n";

  Connection list(host, port);
  list.Send("GET", base + "/pods");
  core::PodList pods;
  pods.ParseFromString(Unwrap(list.All()).raw());
  std::cout << "pods " << pods.items_size() << "\n";

  // A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
  Connection watch(host, port);
  watch.Send("GET", base + "/pods?watch=1");
  for (int i = 0; i < 3; i++) {
    std::string prefix = watch.Body(4);
    uint32_t length = (uint8_t)prefix[0] << 24 | (uint8_t)prefix[1] << 16 | (uint8_t)prefix[2] << 8 | (uint8_t)prefix[3];
    meta::WatchEvent event;
    event.ParseFromString(watch.Body(length));
    runtime::Unknown unknown = Unwrap(event.object().raw());
    core::Pod watched;
    watched.ParseFromString(unknown.raw());
    std::cout << "event " << event.type() << " " << unknown.typemeta().kind() << " " << watched.metadata().name() << "\n";
  }

  core::ConfigMap config_map;
  config_map.mutable_metadata()->set_name("from-cpp");
  (*config_map.mutable_data())["language"] = "cpp";
  Connection post(host, port);
  post.Send("POST", base + "/configmaps", Wrap(config_map, "v1", "ConfigMap"));
  core::ConfigMap stored;
  stored.ParseFromString(Unwrap(post.All()).raw());
  std::cout << "created " << post.status() << " " << stored.metadata().name() << " uid " << stored.metadata().uid() << "\n";
  return 0;
}
