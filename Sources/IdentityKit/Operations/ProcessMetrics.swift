import Foundation

/// The standard `process_*` metrics and the database pool's gauges, read at scrape time: CPU
/// time, memory and start time from `/proc/self/stat`, open descriptors from `/proc/self/fd`,
/// the descriptor limit from `getrlimit` (what `/proc/self/limits` shows), the pools from
/// `PGPool.usage`. Where `/proc` cannot be read (not Linux), those series are left out.
enum ProcessMetrics {
    private static let registered = Locked(false)

    /// Adds the collector to `registry` once per process.
    static func register(_ registry: Metrics) {
        let first = registered.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        registry.onCollect { collect() }
    }

    private static func collect() {
        if let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let stat = Stat(parsing: text), let boot = bootTime() {
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            let page = Double(sysconf(Int32(_SC_PAGESIZE)))
            ServiceMetrics.processCPU.family.update([]) { $0.value = Double(stat.userTicks + stat.systemTicks) / ticks }
            ServiceMetrics.processResident.set(Double(stat.residentPages) * page)
            ServiceMetrics.processVirtual.set(Double(stat.virtualBytes))
            ServiceMetrics.processStartTime.set(boot + Double(stat.startTicks) / ticks)
        }
        if let open = openDescriptors() { ServiceMetrics.processOpenFDs.set(Double(open)) }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            ServiceMetrics.processMaxFDs.set(Double(limit.rlim_cur))
        }
        let pools = PGPool.usage()
        ServiceMetrics.dbPoolInUse.set(Double(pools.inUse))
        ServiceMetrics.dbPoolIdle.set(Double(pools.idle))
        ServiceMetrics.dbPoolSize.set(Double(pools.size))
    }

    /// The fields of `/proc/self/stat` these metrics use (proc(5); clock ticks and pages).
    struct Stat: Equatable {
        var userTicks: UInt64
        var systemTicks: UInt64
        var startTicks: UInt64
        var virtualBytes: UInt64
        var residentPages: UInt64

        /// The command name (field 2) is in parentheses and may hold spaces or parentheses
        /// itself: fields are counted from after its last ")".
        init?(parsing text: String) {
            guard let close = text.lastIndex(of: ")") else { return nil }
            // From field 3 (state) on: field n is at index n - 3.
            let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
            func field(_ number: Int) -> UInt64? {
                let index = number - 3
                guard index < fields.count else { return nil }
                return UInt64(fields[index].trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard let utime = field(14), let stime = field(15), let start = field(22), let vsize = field(23),
                  let rss = field(24) else { return nil }
            userTicks = utime
            systemTicks = stime
            startTicks = start
            virtualBytes = vsize
            residentPages = rss
        }
    }

    /// The `btime` line of `/proc/stat`: when the machine booted (Unix time), which process
    /// start ticks count from.
    static func bootTime(_ text: String? = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) -> Double? {
        guard let text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Entries of `/proc/self/fd` (the directory's own descriptor among them, as other clients count).
    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return count
    }
}
