// The HTTP edge: routing every request into ApiServer, watch streaming, authentication and
// health endpoints, on Boost.Beast.
#include "arbiter/api/http.h"

#include "arbiter/api/authn.h"
#include "arbiter/api/fair_seats.h"
#include "arbiter/api/http_request.h"

#include "arbiter/api/protobuf_codec.h"

#include <zlib.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <cctype>
#include <cerrno>
#include <optional>
#include <thread>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

namespace arbiter::api {

using Json = nlohmann::json;

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;

// A completion handler of any type, as one type: what the transports below are compiled for.
// It keeps the handler's executor, so the handler still runs where its operation asked. (Asio's
// any_completion_handler would do, but Boost 1.81's cannot be posted by Beast's streams.) Every
// handler here has an executor; the handler's cancellation slot is not carried, and nothing in
// this file cancels a stream operation (deadlines are the tcp_stream's, which close the socket).
// executor_ is declared before impl_ so that it is read from the handler before the move.
class ErasedHandler {
 public:
  using executor_type = asio::any_io_executor;
  template <typename Handler>
  explicit ErasedHandler(Handler&& h)
      : executor_(asio::get_associated_executor(h)),
        impl_(std::make_unique<Impl<std::decay_t<Handler>>>(std::forward<Handler>(h))) {}
  executor_type get_executor() const noexcept { return executor_; }
  void operator()(beast::error_code ec, std::size_t n) {
    auto impl = std::move(impl_);  // freed once the handler returns (it has moved its coroutine out by then)
    impl->Call(ec, n);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void Call(beast::error_code ec, std::size_t n) = 0;
  };
  template <typename Handler>
  struct Impl final : Base {
    explicit Impl(Handler&& h) : handler(std::move(h)) {}
    void Call(beast::error_code ec, std::size_t n) override { std::move(handler)(ec, n); }
    Handler handler;
  };
  executor_type executor_;
  std::unique_ptr<Base> impl_;
};

// The connection's stream, whatever its transport (TCP, or TLS over TCP). The session's
// coroutines and Beast's HTTP reads and writes are compiled once, for this type, instead of once
// per transport: half of this file's compile time. The cost is a virtual call and a handler
// allocation per read or write, small beside the system call under it.
class AnyStream {
 public:
  using executor_type = asio::any_io_executor;
  using next_layer_type = beast::tcp_stream;  // next_layer() below is what beast::get_lowest_layer follows
  // A buffer sequence of up to kMaxBuffers buffers: a read or write may use fewer than offered.
  static constexpr size_t kMaxBuffers = 16;
  template <typename Buffer>
  struct Buffers {
    using value_type = Buffer;
    using const_iterator = const Buffer*;
    std::array<Buffer, kMaxBuffers> items;
    size_t count = 0;
    const Buffer* begin() const { return items.data(); }
    const Buffer* end() const { return items.data() + count; }
  };

  struct Transport {
    virtual ~Transport() = default;
    virtual beast::tcp_stream& Socket() = 0;
    virtual void ReadSome(const Buffers<asio::mutable_buffer>& buffers, ErasedHandler handler) = 0;
    virtual void WriteSome(const Buffers<asio::const_buffer>& buffers, ErasedHandler handler) = 0;
  };
  template <typename Stream>
  struct TransportOf final : Transport {
    explicit TransportOf(Stream& s) : stream(s) {}
    beast::tcp_stream& Socket() override { return beast::get_lowest_layer(stream); }
    void ReadSome(const Buffers<asio::mutable_buffer>& buffers, ErasedHandler handler) override {
      stream.async_read_some(buffers, std::move(handler));
    }
    void WriteSome(const Buffers<asio::const_buffer>& buffers, ErasedHandler handler) override {
      stream.async_write_some(buffers, std::move(handler));
    }
    Stream& stream;
  };

  explicit AnyStream(Transport& transport) : transport_(transport) {}
  executor_type get_executor() { return transport_.Socket().get_executor(); }
  next_layer_type& next_layer() { return transport_.Socket(); }

  template <typename MutableBufferSequence, typename Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(beast::error_code, std::size_t)>(
        [this](auto handler, const Buffers<asio::mutable_buffer>& b) {
          transport_.ReadSome(b, ErasedHandler(std::move(handler)));
        },
        token, Collect<asio::mutable_buffer>(buffers));
  }
  template <typename ConstBufferSequence, typename Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(beast::error_code, std::size_t)>(
        [this](auto handler, const Buffers<asio::const_buffer>& b) {
          transport_.WriteSome(b, ErasedHandler(std::move(handler)));
        },
        token, Collect<asio::const_buffer>(buffers));
  }

 private:
  template <typename Buffer, typename Sequence>
  static Buffers<Buffer> Collect(const Sequence& sequence) {
    Buffers<Buffer> out;
    for (auto it = asio::buffer_sequence_begin(sequence); it != asio::buffer_sequence_end(sequence) && out.count < kMaxBuffers; ++it) {
      const Buffer b(*it);
      if (b.size() > 0) out.items[out.count++] = b;
    }
    return out;
  }

  Transport& transport_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(ApiServer* a, HttpOptions o) : api(a), options(std::move(o)), workers(std::max<size_t>(1, options.worker_threads)) {
    if (api != nullptr) {
      FairSeats::Options seat_options;
      seat_options.seats =
          options.list_seats > 0 ? options.list_seats : std::max<size_t>(1, std::thread::hardware_concurrency() / 2);
      seat_options.queue_per_client = options.list_queue_per_client;
      seats = std::make_unique<FairSeats>(seat_options);
    }
  }

  ApiServer* api;  // null: the operations endpoints only
  HttpOptions options;
  asio::io_context io;
  asio::thread_pool workers;
  // After the pool and the I/O context: destroyed first, its running tasks finish while both stand.
  std::unique_ptr<FairSeats> seats;

  // Runs `work` in a fair seat of `client` (fair_seats.h) and resumes the caller on its own
  // executor with the result; nullopt when the client's queue (or all queues) are full.
  template <class T>
  struct SeatInitiation {
    Impl* impl;
    template <class Handler>
    void operator()(Handler&& handler, std::string client, std::function<T()> work) const {
      auto executor = asio::get_associated_executor(handler, impl->io.get_executor());
      auto resume = std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler));
      auto finish = [resume, executor](std::optional<T> value) {
        asio::post(executor, [resume, value = std::move(value)]() mutable { (*resume)(std::move(value)); });
      };
      const bool queued = impl->seats->Submit(client, [work = std::move(work), finish]() {
        std::optional<T> value;
        try {
          value = work();
        } catch (...) {
          // Answered as a refusal: the caller must never wait for good.
        }
        finish(std::move(value));
      });
      if (!queued) finish(std::nullopt);
    }
  };
  template <class T, class Token>
  auto AsyncInSeat(std::string client, std::function<T()> work, Token&& token) {
    return asio::async_initiate<Token, void(std::optional<T>)>(SeatInitiation<T>{this}, token, std::move(client),
                                                              std::move(work));
  }
  std::unique_ptr<ssl::context> tls;
  std::unique_ptr<tcp::acceptor> acceptor;
  struct Check {
    std::string name;
    std::function<bool()> check;
    bool healthz;  // also fails /healthz (else /readyz only)
  };
  std::vector<Check> ready_checks;
  std::function<std::string()> metrics;
  struct Route {
    std::string prefix;
    RouteHandler handler;
    bool exact = false;
  };
  std::vector<Route> routes;
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> connections{0};
  int bound_port = 0;

  void Log(const std::string& verb, const std::string& target, int code, const std::string& user,
           const std::string& remote, const std::string& message) {
    if (!options.log) return;
    options.log("Request rejected", "verb=\"" + verb + "\" URI=\"" + target + "\" code=" + std::to_string(code) +
                                        " user=\"" + user + "\" remote=\"" + remote + "\" message=" + Json(message).dump());
  }

  // The /healthz, /livez, /readyz and /metrics answers; false when `path` is none of them.
  bool Operations(const std::string& path, const std::map<std::string, std::string>& query, http::response<http::string_body>& res) {
    const bool ready = path == "/healthz" || path == "/readyz";
    if (ready || path == "/livez") {
      bool ok = true;
      std::string verbose = "[+]ping ok\n";
      if (ready) {
        for (const auto& [name, check, healthz] : ready_checks) {
          if (path == "/healthz" && !healthz) continue;
          const bool pass = check();
          ok = ok && pass;
          verbose += (pass ? "[+]" : "[-]") + name + (pass ? " ok\n" : " failed\n");
        }
        if (stopping) {
          ok = false;
          verbose += "[-]shutdown failed: the server is shutting down\n";
        }
      }
      res.result(ok ? 200 : 503);
      res.set(http::field::content_type, "text/plain");
      res.body() = query.count("verbose") ? verbose + (ok ? "healthz check passed\n" : "healthz check failed\n")
                                          : std::string(ok ? "ok" : "not ready");
      return true;
    }
    if (path == "/metrics") {
      std::string text;
      if (api != nullptr) {
        text = "# HELP apiserver_request_total Requests served.\n# TYPE apiserver_request_total counter\n"
               "apiserver_request_total " + std::to_string(requests.load()) + "\n"
               "# HELP apiserver_open_connections Open client connections.\n# TYPE apiserver_open_connections gauge\n"
               "apiserver_open_connections " + std::to_string(connections.load()) + "\n";
        if (seats) {
          // The fair seats of collection reads, under API Priority and Fairness' names.
          text += "# HELP apiserver_flowcontrol_current_executing_seats Seats in use by collection reads.\n"
                  "# TYPE apiserver_flowcontrol_current_executing_seats gauge\n"
                  "apiserver_flowcontrol_current_executing_seats " + std::to_string(seats->running()) + "\n"
                  "# HELP apiserver_flowcontrol_current_inqueue_requests Collection reads waiting for a seat.\n"
                  "# TYPE apiserver_flowcontrol_current_inqueue_requests gauge\n"
                  "apiserver_flowcontrol_current_inqueue_requests " + std::to_string(seats->queued()) + "\n"
                  "# HELP apiserver_flowcontrol_rejected_requests_total Collection reads refused (429): queues full.\n"
                  "# TYPE apiserver_flowcontrol_rejected_requests_total counter\n"
                  "apiserver_flowcontrol_rejected_requests_total " + std::to_string(seats->refused()) + "\n";
        }
      }
      if (metrics) text += metrics();
      res.result(200);
      res.set(http::field::content_type, "text/plain; version=0.0.4");
      res.body() = std::move(text);
      return true;
    }
    return false;
  }

  // Authenticates and authorises `r` from its headers (authn.h); a Status body response when it
  // may not proceed. Runs before the body is read: an unauthenticated client sends nothing more.
  std::optional<std::pair<int, std::string>> Admit(Request& r, const HeaderFields& fields, const std::string& target,
                                                   const std::string& remote) {
    if (options.tokens.empty()) return std::nullopt;
    const bool watch = r.query.count("watch") > 0 && QueryBool(r.query["watch"]);
    const RequestAttributes attrs = AttributesOf(r.method, r.path, watch);
    AuthnOutcome who = AuthenticateRequest(fields, options.tokens, options.authorizer, attrs);
    if (who.code != 0) {
      Log(r.method, target, who.code, who.code == 403 ? who.user.name : "", remote, who.message);
      Json body = StatusBody(who.code, who.reason, who.message);
      if (who.code == 403 && attrs.resource_request) {
        // NewForbidden(resource, name): the details name what was refused.
        body["details"] = {{"kind", attrs.resource}};
        if (!attrs.api_group.empty()) body["details"]["group"] = attrs.api_group;
        if (!attrs.name.empty()) body["details"]["name"] = attrs.name;
      }
      return std::pair{who.code, body.dump()};
    }
    r.user = who.user.name;
    r.uid = who.user.uid;
    r.groups = who.user.groups;
    r.authenticated = true;
    return std::nullopt;
  }

  awaitable<void> Write(AnyStream& stream, http::response<http::string_body>& res, bool keep_alive) {
    res.keep_alive(keep_alive);
    res.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(options.body_timeout);
    beast::error_code ec;
    co_await http::async_write(stream, res, asio::redirect_error(use_awaitable, ec));
    // end_of_stream only says that the answer asked to close the connection.
    if (ec && ec != http::error::end_of_stream) throw beast::system_error(ec);
  }

  awaitable<bool> StreamWatch(AnyStream& stream, std::shared_ptr<WatchStream> w, unsigned version,
                              std::string client = "") {
    http::response<http::empty_body> res{http::status::ok, version};
    res.set(http::field::content_type, w->protobuf ? std::string(kProtobufWatchMediaType) : "application/json;stream=watch");
    res.chunked(true);
    res.keep_alive(false);  // the stream ends the connection, as kube-apiserver's do at timeout
    http::response_serializer<http::empty_body> sr{res};
    auto& lowest = beast::get_lowest_layer(stream);
    lowest.expires_after(options.body_timeout);
    co_await http::async_write_header(stream, sr, use_awaitable);
    auto send = [&](std::string& chunk) -> awaitable<void> {
      if (chunk.empty()) co_return;
      lowest.expires_after(options.body_timeout);  // a client that stops reading is dropped
      co_await asio::async_write(stream, http::make_chunk(asio::buffer(chunk)), use_awaitable);
      chunk.clear();
    };
    std::string chunk;
    // The initial state, a chunk at a time, each made in a fair seat of the client's (on a worker
    // without one): never on an I/O thread, whatever its size.
    size_t next = 0;
    while (next < w->initial.size()) {
      WatchStream* const raw = w.get();
      ApiServer* const server = api;
      std::function<std::string()> make = [raw, server, &next] {
        std::string out;
        while (next < raw->initial.size() && out.size() < (256 << 10)) {
          out += server->WatchLine(*raw, store::EventType::kAdded, *raw->initial[next], /*shared=*/false);
          raw->initial[next++].reset();
        }
        return out;
      };
      if (!client.empty()) {
        std::optional<std::string> made = co_await AsyncInSeat<std::string>(client, std::move(make), use_awaitable);
        if (!made) {
          auto wait = asio::steady_timer(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
          co_await wait.async_wait(use_awaitable);
          continue;
        }
        chunk = std::move(*made);
      } else {
        chunk = co_await asio::co_spawn(workers, [&make]() -> awaitable<std::string> { co_return make(); }, use_awaitable);
      }
      co_await send(chunk);
    }
    w->initial.clear();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(w->timeout_seconds);
    const auto executor = co_await asio::this_coro::executor;
    auto timer = std::make_shared<asio::steady_timer>(executor);
    // Woken by the store when events arrive (the wake-up runs on this connection's strand, so it
    // cannot slip between the empty Next and the wait); a backend that cannot notify is polled.
    const bool notified = w->watch->SetNotifier([timer, executor] { asio::post(executor, [timer] { timer->cancel(); }); });
    const auto pause = notified ? std::chrono::milliseconds(1000) : options.watch_poll;
    while (!stopping && std::chrono::steady_clock::now() < deadline) {
      auto events = w->watch->Next(std::chrono::milliseconds(0));  // never blocks an I/O thread
      if (!events.ok()) {
        if (events.status().code() == StatusCode::kGone) {
          chunk = ApiServer::WatchErrorLine(*w, StatusBody(410, "Expired", events.status().message()));
          co_await send(chunk);
        }
        break;
      }
      for (const auto& e : *events) {
        if (ApiServer::Selected(*w, e->object)) chunk += api->WatchLine(*w, *e);
      }
      if (!chunk.empty()) {
        co_await send(chunk);
        continue;
      }
      timer->expires_after(std::min<std::chrono::steady_clock::duration>(pause, deadline - std::chrono::steady_clock::now()));
      beast::error_code cancelled;
      co_await timer->async_wait(asio::redirect_error(use_awaitable, cancelled));
    }
    w->watch->SetNotifier(nullptr);
    w->watch->Stop();
    lowest.expires_after(options.body_timeout);
    co_await asio::async_write(stream, http::make_chunk_last(), use_awaitable);
    co_return false;
  }

  // A response streamed as it is made (TextStream: `kubectl logs -f`): the body, then each piece
  // `next` gives (asked on the worker pool, as the API is), chunked, until it ends, times out or
  // the client stops reading.
  // Returns whether the connection may serve another request (the stream ended by itself, it
  // allows it, and the client asked to keep the connection).
  // With a `client`, each piece is made in a fair seat of that client's (a long list's chunks).
  awaitable<bool> StreamText(AnyStream& stream, Response out, unsigned version, bool keep_alive,
                             std::string client = "") {
    http::response<http::empty_body> res{http::status::ok, version};
    res.set(http::field::content_type, out.content_type);
    for (const auto& w : out.warnings) res.insert(http::field::warning, "299 - " + Json(w).dump());
    res.chunked(true);
    keep_alive = keep_alive && out.stream->keep_alive;
    res.keep_alive(keep_alive);
    http::response_serializer<http::empty_body> sr{res};
    auto& lowest = beast::get_lowest_layer(stream);
    lowest.expires_after(options.body_timeout);
    co_await http::async_write_header(stream, sr, use_awaitable);
    auto send = [&](const std::string& chunk) -> awaitable<void> {
      if (chunk.empty()) co_return;
      lowest.expires_after(options.body_timeout);  // a client that stops reading is dropped
      co_await asio::async_write(stream, http::make_chunk(asio::buffer(chunk)), use_awaitable);
    };
    co_await send(out.body);
    const std::shared_ptr<TextStream> text = out.stream;
    const auto deadline = std::chrono::steady_clock::now() + text->timeout;
    auto timer = asio::steady_timer(co_await asio::this_coro::executor);
    bool ended = false;
    while (!stopping && std::chrono::steady_clock::now() < deadline) {
      // The lambda holds a plain pointer (`text` keeps the stream alive): GCC 12 destroys the
      // captures of a lambda temporary in a co_await expression twice, which a shared_ptr
      // capture does not survive.
      TextStream* const raw = text.get();
      std::optional<std::string> piece;
      if (!client.empty()) {
        std::function<std::optional<std::string>()> next = [raw] { return raw->next(); };
        std::optional<std::optional<std::string>> made =
            co_await AsyncInSeat<std::optional<std::string>>(client, std::move(next), use_awaitable);
        if (!made) {  // the seats' queues are full: try again shortly
          timer.expires_after(std::chrono::milliseconds(50));
          co_await timer.async_wait(use_awaitable);
          continue;
        }
        piece = std::move(*made);
      } else {
        piece = co_await asio::co_spawn(
            workers, [raw]() -> awaitable<std::optional<std::string>> { co_return raw->next(); }, use_awaitable);
      }
      if (!piece) {
        ended = true;
        break;
      }
      if (!piece->empty()) {
        co_await send(*piece);
        continue;
      }
      timer.expires_after(text->poll);
      co_await timer.async_wait(use_awaitable);
    }
    lowest.expires_after(options.body_timeout);
    co_await asio::async_write(stream, http::make_chunk_last(), use_awaitable);
    co_return keep_alive && ended;
  }

  // After an early answer (413), reads and drops what the client is still sending, for a
  // bounded time and amount, so that it sees the answer instead of a reset connection.
  awaitable<void> Drain(AnyStream& stream) {
    auto& lowest = beast::get_lowest_layer(stream);
    lowest.expires_after(std::chrono::seconds(5));
    std::vector<char> scratch(64 * 1024);
    size_t drained = 0;
    beast::error_code ec;
    while (!ec && drained < (size_t{64} << 20)) {
      drained += co_await stream.async_read_some(asio::buffer(scratch), asio::redirect_error(use_awaitable, ec));
    }
  }

  // One connection: requests in order (pipelined ones too) until the client or a deadline ends it.
  awaitable<void> Session(AnyStream& stream, std::string remote) {
    auto& lowest = beast::get_lowest_layer(stream);
    beast::flat_buffer buffer;
    for (;;) {
      if (buffer.size() == 0) {
        // Idle between requests: wait for the first byte of the next one.
        lowest.expires_after(options.idle_timeout);
        const size_t n = co_await stream.async_read_some(buffer.prepare(16 * 1024), use_awaitable);
        buffer.commit(n);
      }
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
      parser.body_limit(options.max_body_bytes + 1);
      lowest.expires_after(options.header_timeout);
      beast::error_code ec;
      co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      http::response<http::string_body> res{http::status::ok, 11};
      auto fail = [&](int code, const std::string& reason, const std::string& message) {
        res.result(code);
        res.set(http::field::content_type, "application/json");
        res.body() = StatusBody(code, reason, message).dump();
      };
      Request r;
      std::string target;
      HeaderFields fields;
      if (!ec) {
        // Who is asking is decided from the headers, before the body is read.
        const auto& head = parser.get();
        r.method = std::string(head.method_string());
        target = std::string(head.target());
        ParseTarget(target, &r.path, &r.query);
        for (const auto& h : head) {
          std::string key(h.name_string());
          for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          fields.emplace_back(key, std::string(h.value()));
        }
        // Health is open to all (system:public-info-viewer); /metrics and the API are authorised.
        const bool health = r.method == "GET" && (r.path == "/healthz" || r.path == "/livez" || r.path == "/readyz");
        if (!health) {
          if (auto denied = Admit(r, fields, target, remote)) {
            res.version(head.version());
            res.result(denied->first);
            res.set(http::field::content_type, "application/json");
            res.body() = denied->second;
            co_await Write(stream, res, false);  // the body (if any) is not read: the connection ends
            co_return;
          }
        }
      }
      if (!ec) {
        lowest.expires_after(options.body_timeout);
        co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      }
      if (ec == http::error::body_limit) {
        // The Content-Length alone, or the body as it came, is over the limit.
        fail(413, "RequestEntityTooLarge", "the request body is larger than " + std::to_string(options.max_body_bytes) + " bytes");
        Log(std::string(parser.get().method_string()), std::string(parser.get().target()), 413, "", remote,
            "the request body is too large");
        co_await Write(stream, res, false);
        co_await Drain(stream);
        co_return;
      }
      if (ec) {
        if (ec == http::error::header_limit) {
          fail(431, "RequestHeaderFieldsTooLarge", "the request headers are larger than " + std::to_string(options.max_header_bytes) + " bytes");
          co_await Write(stream, res, false);
        } else if (ec != http::error::end_of_stream && ec != beast::error::timeout && ec != asio::error::eof &&
                   ec != http::error::partial_message) {
          fail(400, "BadRequest", "malformed HTTP request: " + ec.message());
          co_await Write(stream, res, false);
        }
        co_return;
      }
      ++requests;
      auto req = parser.release();
      res.version(req.version());
      const bool keep_alive = req.keep_alive();
      for (auto& [key, value] : fields) r.headers.emplace(std::move(key), std::move(value));  // the first of each
      r.body = std::move(req.body());
      if (auto enc = r.headers.find("content-encoding"); enc != r.headers.end() && !enc->second.empty() && enc->second != "identity") {
        if (enc->second != "gzip" && enc->second != "deflate") {
          fail(415, "UnsupportedMediaType", "the Content-Encoding \"" + enc->second + "\" is not supported: send gzip or none");
          co_await Write(stream, res, keep_alive);
          if (!keep_alive) co_return;
          continue;
        }
        auto inflated = Inflate(r.body, options.max_body_bytes);
        if (!inflated.ok()) {
          const bool big = inflated.status().code() == StatusCode::kOutOfRange;
          fail(big ? 413 : 400, big ? "RequestEntityTooLarge" : "BadRequest", inflated.status().message());
          Log(r.method, target, big ? 413 : 400, "", remote, inflated.status().message());
          co_await Write(stream, res, false);
          co_return;
        }
        r.body = std::move(*inflated);
        r.headers.erase("content-encoding");
      }
      if (r.method == "GET" && Operations(r.path, r.query, res)) {
        co_await Write(stream, res, keep_alive);
        if (!keep_alive) co_return;
        continue;
      }
      const RouteHandler* route = nullptr;
      if (r.method == "GET") {
        for (const Route& candidate : routes) {
          if (candidate.exact ? r.path == candidate.prefix : r.path.starts_with(candidate.prefix)) {
            route = &candidate.handler;
            break;
          }
        }
      }
      if (api == nullptr && route == nullptr) {
        res.result(404);
        res.set(http::field::content_type, "application/json");
        res.body() = StatusBody(404, "NotFound", "the page \"" + r.path + "\" is not served here").dump();
        co_await Write(stream, res, keep_alive);
        if (!keep_alive) co_return;
        continue;
      }
      // Reads of collections take a fair seat of their client's (by user, or by address when
      // requests are not authenticated); other requests never wait behind them.
      const bool in_seat = api != nullptr && route == nullptr && ReadsCollection(r);
      const std::string client = in_seat ? (r.user.empty() ? "address:" + remote : "user:" + r.user) : "";
      Response out;
      if (in_seat) {
        std::function<Response()> work = [this, &r] { return api->Handle(r); };
        std::optional<Response> got = co_await AsyncInSeat<Response>(client, std::move(work), use_awaitable);
        if (!got) {
          // API Priority and Fairness' answer when the queues overflow.
          const std::string message = "Too many requests, please try again later.";
          Log(r.method, target, 429, r.user, remote, message);
          res.result(429);
          res.set(http::field::content_type, "application/json");
          res.set(http::field::retry_after, "1");
          res.body() = StatusBody(429, "TooManyRequests", message).dump();
          co_await Write(stream, res, keep_alive);
          if (!keep_alive) co_return;
          continue;
        }
        out = std::move(*got);
      } else {
        // The API may wait on the store: it runs on the worker pool, never on an I/O thread.
        out = co_await asio::co_spawn(
            workers,
            [this, &r, route]() -> awaitable<Response> {
              if (route == nullptr) co_return api->Handle(r);
              try {
                co_return (*route)(r);
              } catch (const std::exception& e) {
                co_return Response{500, "application/json", StatusBody(500, "InternalError", e.what()).dump(), nullptr, {}, nullptr};
              }
            },
            use_awaitable);
      }
      if (out.code >= 400 && !(out.code == 404 && r.method == "GET")) {
        std::string message;
        try {
          message = Json::parse(out.body).value("message", "");
        } catch (const std::exception&) {
        }
        Log(r.method, target, out.code, r.user, remote, message);
      }
      for (const auto& w : out.warnings) res.insert(http::field::warning, "299 - " + Json(w).dump());
      if (out.watch) {
        co_await StreamWatch(stream, out.watch, req.version(), client);
        co_return;
      }
      if (out.stream && out.code == 200) {
        if (!co_await StreamText(stream, std::move(out), req.version(), keep_alive, client)) co_return;
        continue;
      }
      res.result(out.code);
      res.set(http::field::content_type, out.content_type);
      res.body() = std::move(out.body);
      co_await Write(stream, res, keep_alive);
      if (!keep_alive) co_return;
    }
  }

  awaitable<void> Connection(tcp::socket socket) {
    ++connections;
    struct Count {
      std::atomic<uint64_t>& n;
      ~Count() { --n; }
    } count{connections};
    beast::error_code ignored;
    const auto peer = socket.remote_endpoint(ignored);
    const std::string remote = peer.address().to_string(ignored);
    try {
      if (tls) {
        ssl::stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
        auto& tcp_layer = beast::get_lowest_layer(stream);
        tcp_layer.expires_after(options.header_timeout);
        // A TLS connection opens with a handshake record (0x16). One that opens with a request
        // line is a client speaking plain HTTP to the HTTPS port: told so, as Go's servers do.
        std::array<char, 5> first{};
        const size_t got = co_await tcp_layer.async_read_some(asio::buffer(first), use_awaitable);
        const std::string_view opening(first.data(), got);
        if (got > 0 && first[0] != 0x16 && std::isupper(static_cast<unsigned char>(first[0]))) {
          static constexpr std::string_view kPlainHttp =
              "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
          co_await asio::async_write(tcp_layer, asio::buffer(kPlainHttp), use_awaitable);
          tcp_layer.socket().shutdown(tcp::socket::shutdown_send, ignored);
          co_return;
        }
        co_await stream.async_handshake(ssl::stream_base::server, asio::buffer(opening), use_awaitable);
        AnyStream::TransportOf<decltype(stream)> transport(stream);
        AnyStream any(transport);
        co_await Session(any, remote);
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(1));
        co_await stream.async_shutdown(asio::redirect_error(use_awaitable, ignored));
      } else {
        beast::tcp_stream stream(std::move(socket));
        AnyStream::TransportOf<beast::tcp_stream> transport(stream);
        AnyStream any(transport);
        co_await Session(any, remote);
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      }
    } catch (const std::exception&) {
      // The client went away, timed out or spoke garbage: this connection ends, nothing else.
    }
  }

  awaitable<void> Accept() {
    while (!stopping) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor->async_accept(asio::make_strand(io), asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) co_return;
        continue;  // e.g. too many open files: keep accepting what can be
      }
      socket.set_option(tcp::no_delay(true), ec);
      asio::co_spawn(socket.get_executor(), Connection(std::move(socket)), asio::detached);
    }
  }
};

HttpServer::HttpServer(ApiServer& api, HttpOptions options) : impl_(std::make_unique<Impl>(&api, std::move(options))) {}
HttpServer::HttpServer(HttpOptions options) : impl_(std::make_unique<Impl>(nullptr, std::move(options))) {}

HttpServer::~HttpServer() {
  Stop();
  impl_->workers.join();
}

void HttpServer::AddReadyCheck(std::string name, std::function<bool()> check, bool healthz) {
  impl_->ready_checks.push_back({std::move(name), std::move(check), healthz});
}

void HttpServer::SetMetrics(std::function<std::string()> metrics) { impl_->metrics = std::move(metrics); }

void HttpServer::AddRoute(std::string prefix, RouteHandler handler, bool exact) {
  impl_->routes.push_back({std::move(prefix), std::move(handler), exact});
}

int HttpServer::port() const { return impl_->bound_port; }

Status HttpServer::Bind() {
  Impl& s = *impl_;
  const HttpOptions& o = s.options;
  if (!o.tls_cert_file.empty()) {
    s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
    beast::error_code ec;
    s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    s.tls->use_certificate_chain_file(o.tls_cert_file, ec);
    if (!ec) s.tls->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
    if (ec) {
      return InvalidArgument("cannot serve TLS with --tls-cert-file " + o.tls_cert_file + " and --tls-private-key-file " +
                             o.tls_key_file + " (unreadable or not a certificate and key): " + ec.message());
    }
  }
  const bool v6 = o.host.find(':') != std::string::npos;
  const std::string where = (v6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(o.port);
  beast::error_code ec;
  tcp::resolver resolver(s.io);
  auto endpoints = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) return Unavailable("cannot listen on " + where + ": not an address of this machine");
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  auto acceptor = std::make_unique<tcp::acceptor>(s.io);
  acceptor->open(endpoint.protocol(), ec);
  // SO_REUSEADDR only: a restarted server binds while old connections linger; a second server
  // on a taken port fails.
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    if (ec == asio::error::address_in_use) return Unavailable("cannot listen on " + where + ": the address is already in use");
    if (ec.value() == EADDRNOTAVAIL) return Unavailable("cannot listen on " + where + ": not an address of this machine");
    return Unavailable("cannot listen on " + where + ": " + ec.message());
  }
  s.bound_port = acceptor->local_endpoint().port();
  s.acceptor = std::move(acceptor);
  return Status::Ok();
}

void HttpServer::Serve() {
  Impl& s = *impl_;
  if (!s.acceptor) return;
  asio::co_spawn(s.io, s.Accept(), asio::detached);
  std::vector<std::thread> threads;
  for (size_t i = 1; i < std::max<size_t>(1, s.options.io_threads); ++i) threads.emplace_back([&s] { s.io.run(); });
  s.io.run();
  for (auto& t : threads) t.join();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (s.stopping.exchange(true)) return;
  asio::post(s.io, [&s] {
    beast::error_code ignored;
    if (s.acceptor) s.acceptor->close(ignored);
  });
  // Watches notice `stopping` within a poll; everything else ends with the I/O context.
  s.io.stop();
}

}  // namespace arbiter::api
