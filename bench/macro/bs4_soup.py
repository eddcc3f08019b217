"""HTML scraping with BeautifulSoup over the standard library's html.parser:
parsing a generated page, find_all by tag, class and attribute, CSS selectors
(soupsieve), text extraction and prettify. Result: counts and checksum."""
import zlib

from bs4 import BeautifulSoup


def make_page(rows):
    out = ["<html><head><title>Shop</title></head><body><div id='main'>"]
    for i in range(rows):
        out.append('<div class="product p%d" data-id="%d"><h2>Product %d</h2>'
                   '<span class="price">%d.%02d</span><a href="/item/%d">more</a>'
                   '<ul class="tags"><li>t%d</li><li>g%d</li></ul></div>'
                   % (i % 4, i, i, i * 3 % 97, i % 100, i, i % 5, i % 3))
    out.append("</div></body></html>")
    return "".join(out)


def run():
    soup = BeautifulSoup(make_page(500), "html.parser")
    prices = [float(s.get_text()) for s in soup.find_all("span", class_="price")]
    links = [a["href"] for a in soup.find_all("a", href=True)]
    p2 = soup.select("div.product.p2 > ul.tags li")
    ids = [int(d["data-id"]) for d in soup.find_all(attrs={"data-id": True}) if d.h2 is not None]
    text = soup.get_text("|") + soup.prettify()
    return round(sum(prices), 2), len(links), len(p2), sum(ids), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
