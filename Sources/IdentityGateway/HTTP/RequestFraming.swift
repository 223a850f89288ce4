/// Whether a request's body framing is unambiguous, checked once its headers are complete and
/// before any body is read.
///
/// A front proxy and the gateway must agree on where a request ends, or the rest of one body
/// becomes a second, smuggled request. libmicrohttpd 0.9.75 is lenient where proxies differ:
/// it takes the chunked body when both `Content-Length` and `Transfer-Encoding` are sent, the
/// first of two different `Content-Length`s, and reads a non-chunked `Transfer-Encoding` body
/// until the connection closes. So every ambiguous case is refused (RFC 9112 §6.1, §6.3) and the
/// connection closed, since what follows on it cannot be framed either.
enum RequestFraming {
    enum Verdict: Equatable {
        /// Acceptable; the declared body length when there is one.
        case acceptable(contentLength: Int?)
        /// Refused, with a reason for the log (never sent to the client).
        case refused(String)
    }

    static func check(_ headers: HeaderLines, httpVersion: String) -> Verdict {
        // Whitespace before the colon: RFC 9112 §5.1 says reject, since some intermediaries
        // strip it ("Content-Length : 5" becomes a Content-Length) and others do not.
        if headers.lines.contains(where: { $0.name.isEmpty || $0.name.contains(where: { $0 == " " || $0 == "\t" }) }) {
            return .refused("whitespace in a header name")
        }
        let lengths = headers.values("content-length")
        let encodings = headers.values("transfer-encoding")
        if !encodings.isEmpty {
            if !lengths.isEmpty { return .refused("both Content-Length and Transfer-Encoding") }
            // HTTP/1.0 has no chunked coding; a 1.0 message with it is faulty framing (§6.1).
            if httpVersion == "HTTP/1.0" { return .refused("Transfer-Encoding in HTTP/1.0") }
            // Exactly one line saying exactly "chunked": libmicrohttpd compares the first line's
            // raw value, so "chunked " or "gzip, chunked" would be read to the end of the
            // connection by it while a proxy may see a chunked body.
            guard encodings.count == 1, encodings[0].lowercased() == "chunked" else {
                return .refused("Transfer-Encoding other than chunked")
            }
            return .acceptable(contentLength: nil)
        }
        if lengths.isEmpty { return .acceptable(contentLength: nil) }
        // Every value of every line, "5, 5" included, must be the same decimal number.
        var length: Int?
        for element in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            guard let value = decimal(element.trimmingBlanks) else {
                return .refused("Content-Length not 1*DIGIT or too large")
            }
            if let length, length != value { return .refused("different Content-Length values") }
            length = value
        }
        return .acceptable(contentLength: length)
    }

    /// 1*DIGIT that fits an Int; nil otherwise (sign, blanks inside, hex, overflow, empty).
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 48, byte <= 57 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 48))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }
}
