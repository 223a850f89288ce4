/// Text put into HTML (mail bodies, the console's pages): every character that could start
/// markup or end an attribute is escaped, so nothing a user, an app or a setting holds is read
/// as markup.
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
