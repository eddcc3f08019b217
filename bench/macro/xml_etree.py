"""XML with the standard library's ElementTree: building a document,
serializing it (ElementTree.write is pure Python), parsing it back, XPath-like
findall and iterparse, and minidom pretty-printing a part. Result: counts and
checksum."""
import io
import xml.dom.minidom
import xml.etree.ElementTree as ET
import zlib


def build(n):
    root = ET.Element("catalog", {"version": "2"})
    for i in range(n):
        book = ET.SubElement(root, "book", id="b%d" % i, lang=("en", "fr", "de")[i % 3])
        ET.SubElement(book, "title").text = "Title <%d> & more" % i
        ET.SubElement(book, "price", currency="EUR").text = "%d.%02d" % (i % 90, i % 100)
        authors = ET.SubElement(book, "authors")
        for j in range(i % 3 + 1):
            ET.SubElement(authors, "author").text = "Author %d" % (i * 7 + j)
        book.tail = "\n"
    return ET.ElementTree(root)


def run():
    tree = build(4500)
    buf = io.BytesIO()
    tree.write(buf, encoding="utf-8", xml_declaration=True)
    data = buf.getvalue()
    root = ET.fromstring(data)
    fr = root.findall("./book[@lang='fr']/title")
    prices = sum(float(p.text) for p in root.iter("price"))
    events = sum(1 for _ in ET.iterparse(io.BytesIO(data), events=("start", "end")))
    text = ET.tostring(root[:60][0], encoding="unicode") + "".join(ET.tostring(b, encoding="unicode")
                                                                   for b in root[:200])
    pretty = xml.dom.minidom.parseString(ET.tostring(root[:1][0])).toprettyxml()
    for b in root[:200]:
        ET.indent(b)
    return len(fr), round(prices, 2), events, zlib.crc32((text + pretty).encode())


if __name__ == "__main__":
    print(run())
