// The XML reader Xcode models are read with: elements, attributes, text, entities and character
// references, comments, CDATA, the declaration, processing instructions and a DOCTYPE, each
// element at its `line:column`; and malformed documents refused with the place of the fault.

import Foundation
import Testing

@testable import SiftStore

@Suite struct XMLReaderTests {
    func parse(_ text: String) throws -> XMLTreeElement { try XMLReader.parse(Array(text.utf8)) }

    /// The error `text` is refused with.
    func refusal(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> XMLSyntaxError? {
        do {
            _ = try XMLReader.parse(Array(text.utf8))
            Issue.record("the document was accepted", sourceLocation: sourceLocation)
        } catch { return error }
        return nil
    }

    @Test func readsElementsAttributesAndTextWithTheirPlaces() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <!-- a comment -->
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion='1.0'>
                <entity name="Café" isAbstract="YES">
                  <attribute name="a"
                     attributeType="String"/>
                </entity>
                <?target some instruction?>
                <fetchRequest name="f" predicateString="age &gt; 3 AND name == &quot;x&amp;y&quot; AND s == &apos;&#65;&#x42;&lt;&apos;"/>
                <note>one <![CDATA[<two> & ]]>three&#10;</note>
            </model>
            <!-- trailing comment -->

            """
        let root = try parse(text)
        #expect(root.name == "model")
        #expect(root.location.line == 4 && root.location.column == 1)
        #expect(root["documentVersion"] == "1.0")
        #expect(root.children.map(\.name) == ["entity", "fetchRequest", "note"])
        let entity = root.children[0]
        #expect(entity["name"] == "Café")
        #expect(entity.location.line == 5 && entity.location.column == 5)
        let attribute = entity.children[0]
        #expect(attribute.location.line == 6 && attribute.location.column == 7)
        #expect(attribute.attributes[1].name == "attributeType")
        #expect(attribute.attributes[1].location.line == 7 && attribute.attributes[1].location.column == 10)
        #expect(root.children[1]["predicateString"] == "age > 3 AND name == \"x&y\" AND s == 'AB<'")
        #expect(root.children[2].text == "one <two> & three\n")
    }

    @Test func columnsCountCharactersAndCRLFIsOneLineBreak() throws {
        let root = try parse("<a>\r\n<é/>é<b x='1'\r\n y=\"a\tb\rc\"/>\r\n</a>")
        #expect(root.children[0].location.line == 2 && root.children[0].location.column == 1)
        let b = root.children[1]
        #expect(b.location.line == 2 && b.location.column == 6)
        #expect(b.attributes[1].location.line == 3 && b.attributes[1].location.column == 2)
        // White space characters written in a value are spaces; text keeps line breaks as LF.
        #expect(b["y"] == "a b c")
        #expect(root.text == "\né\n")
    }

    @Test func malformedDocumentsAreErrorsWithTheirPlace() throws {
        let cases: [(String, Int, Int, String)] = [
            ("", 1, 1, "no root element"),
            ("<a>", 1, 4, "not closed"),
            ("<a></b>", 1, 4, "does not match start tag 'a'"),
            ("<a x=\"1\" x=\"2\"/>", 1, 10, "appears twice"),
            ("<a x=1/>", 1, 6, "must be quoted"),
            ("<a x=\"<\"/>", 1, 7, "'<' is not allowed"),
            ("<a>&nbsp;</a>", 1, 4, "unknown entity '&nbsp;'"),
            ("<a>AT&T</a>", 1, 6, "must start a reference"),
            ("<a>&#0;</a>", 1, 4, "not a character XML allows"),
            ("<a>&#xD800;</a>", 1, 4, "not a character XML allows"),
            ("<a/><b/>", 1, 5, "a second root element"),
            ("<a/>text", 1, 5, "text after the root element"),
            ("text", 1, 1, "text outside the root element"),
            ("<a>\n  <!-- open", 2, 3, "unterminated comment"),
            ("<a><![CDATA[x</a>", 1, 4, "unterminated CDATA"),
            ("<a x=\"1\"y=\"2\"/>", 1, 9, "white space before an attribute"),
            ("<1a/>", 1, 2, "expected an element name"),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>", 1, 21, "encoding 'UTF-16' is not supported"),
            ("<?xml encoding=\"UTF-8\"?><a/>", 1, 1, "has no version"),
            ("<a/>\n<?xml version=\"1.0\"?>", 2, 1, "only allowed at the start"),
            ("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>", 1, 13, "internal subset is not supported"),
            ("<a>]]></a>", 1, 4, "']]>' is not allowed"),
            ("<a", 1, 3, "ends inside a tag"),
        ]
        for (text, line, column, message) in cases {
            guard let e = refusal(text) else { continue }
            #expect(e.location.line == line && e.location.column == column, "\(text.debugDescription): \(e)")
            #expect(e.message.contains(message), "\(text.debugDescription): \(e)")
        }
    }

    @Test func bytesThatAreNotUTF8AreAnErrorAtTheirPlace() throws {
        var bytes = Array("<a>\n  ok".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("</a>".utf8)
        do {
            _ = try XMLReader.parse(bytes)
            Issue.record("accepted")
        } catch {
            #expect(error.location.line == 2 && error.location.column == 5, "\(error)")
            #expect(error.message.contains("not UTF-8"))
        }
    }

    @Test func nestingIsReadUpToItsLimitAndRefusedBeyond() throws {
        let depth = XMLReader.maxDepth
        var element = try parse(String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth))
        var levels = 1
        while let child = element.children.first {
            element = child
            levels += 1
        }
        #expect(levels == depth)
        let deeper = String(repeating: "<a>", count: depth + 1) + String(repeating: "</a>", count: depth + 1)
        let e = refusal(deeper)
        #expect(e?.message == "elements nested deeper than \(depth) levels")
        #expect(e?.location.column == 3 * depth + 1)
        // Unclosed far down, and a huge unclosed document: errors, not crashes.
        #expect(refusal(String(repeating: "<a>", count: 10))?.message.contains("not closed") == true)
        #expect(refusal(String(repeating: "<a>", count: 1_000_000))?.message.contains("deeper than") == true)
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let root = try XMLReader.parse([0xEF, 0xBB, 0xBF] + Array("<m k=\"v\"/>".utf8))
        #expect(root.name == "m" && root["k"] == "v")
    }
}
