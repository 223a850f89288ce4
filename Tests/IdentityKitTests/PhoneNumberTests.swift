import XCTest
@testable import IdentityKit

/// A few known answers of `PhoneNumber`; the oracle over generated numbers of every region is
/// Tests/e2e/test_phone_numbers.py (against the `phonenumbers` package).
final class PhoneNumberTests: XCTestCase {
    func testE164WithSeparators() {
        XCTAssertEqual(PhoneNumber.normalize("+33 6 12 34 56 78"), "+33612345678")
        XCTAssertEqual(PhoneNumber.normalize("+1 (202) 555-0143"), "+12025550143")
        XCTAssertEqual(PhoneNumber.normalize("+44 7700 900123"), "+447700900123")
    }

    func testNationalNumbersWithTheirCountry() {
        XCTAssertEqual(PhoneNumber.normalize("06 12 34 56 78", country: "FR"), "+33612345678")
        XCTAssertEqual(PhoneNumber.normalize("06 12 34 56 78", country: "+33"), "+33612345678")
        XCTAssertEqual(PhoneNumber.normalize("07700 900123", country: "gb"), "+447700900123")
        // Italy keeps its leading zero; Argentina's mobile "15" becomes the international "9".
        XCTAssertEqual(PhoneNumber.normalize("06 1234 5678", country: "IT"), "+390612345678")
        XCTAssertEqual(PhoneNumber.normalize("011 15 2345 6789", country: "AR"), "+5491123456789")
    }

    func testImpossibleNumbersAreRefused() {
        for (number, country) in [("12345", nil), ("+33 6 12", nil), ("0612345678", nil), ("0612345678", "ZZ"),
                                  ("+999123456789", nil), ("+33abc", nil), ("+", nil), (String(repeating: "1", count: 80), "FR")]
            as [(String, String?)] {
            XCTAssertNil(PhoneNumber.normalize(number, country: country), "\(number) \(country ?? "")")
        }
    }

    func testCallingCodes() {
        XCTAssertEqual(PhoneNumber.callingCode(ofE164: "+33612345678"), 33)
        XCTAssertEqual(PhoneNumber.callingCode(ofE164: "+12025550143"), 1)
        XCTAssertEqual(PhoneNumber.callingCode(ofE164: "+355691234567"), 355)
        XCTAssertNil(PhoneNumber.callingCode(ofE164: "0612345678"))
    }
}
