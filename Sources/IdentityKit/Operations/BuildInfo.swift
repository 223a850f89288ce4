/// What `identity_build_info` reports. The version is declared here, in the source: a build from
/// a checkout reports the version of that checkout, with nothing to pass at build time.
public enum BuildInfo {
    public static let version = "1.0.0"
}
