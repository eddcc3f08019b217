"""Ray tracer: a small scene of spheres over a checkered floor, lit by two
point lights, with shadows and one level of mirror reflection.

Stresses: float arithmetic through objects, operator overloading (__add__,
__sub__, __mul__), method calls, attribute access, sqrt, isinstance-free
polymorphism (Sphere / Floor share an interface). Result: (sum of all colour
channels, number of primary rays that hit something).
"""

import math

WIDTH = 96
HEIGHT = 72
MAX_DEPTH = 2
EPSILON = 1e-6


class Vec:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y, self.z + o.z)

    def __sub__(self, o):
        return Vec(self.x - o.x, self.y - o.y, self.z - o.z)

    def __mul__(self, k):
        return Vec(self.x * k, self.y * k, self.z * k)

    def dot(self, o):
        return self.x * o.x + self.y * o.y + self.z * o.z

    def length(self):
        return math.sqrt(self.dot(self))

    def unit(self):
        n = self.length()
        return Vec(self.x / n, self.y / n, self.z / n)

    def mirror(self, normal):
        return self - normal * (2.0 * self.dot(normal))


class Colour:
    __slots__ = ("r", "g", "b")

    def __init__(self, r, g, b):
        self.r = r
        self.g = g
        self.b = b

    def plus(self, o):
        return Colour(self.r + o.r, self.g + o.g, self.b + o.b)

    def scaled(self, k):
        return Colour(self.r * k, self.g * k, self.b * k)

    def tint(self, o):
        return Colour(self.r * o.r, self.g * o.g, self.b * o.b)


BLACK = Colour(0.0, 0.0, 0.0)


class Ray:
    __slots__ = ("origin", "direction")

    def __init__(self, origin, direction):
        self.origin = origin
        self.direction = direction

    def at(self, t):
        return self.origin + self.direction * t


class Sphere:
    def __init__(self, centre, radius, colour, shine):
        self.centre = centre
        self.radius = radius
        self.colour = colour
        self.shine = shine

    def hit(self, ray):
        oc = ray.origin - self.centre
        b = oc.dot(ray.direction)
        c = oc.dot(oc) - self.radius * self.radius
        disc = b * b - c
        if disc < 0.0:
            return None
        root = math.sqrt(disc)
        t = -b - root
        if t > EPSILON:
            return t
        t = -b + root
        if t > EPSILON:
            return t
        return None

    def normal_at(self, point):
        return (point - self.centre).unit()

    def colour_at(self, point):
        return self.colour


class Floor:
    def __init__(self, height, shine):
        self.height = height
        self.shine = shine
        self.normal = Vec(0.0, 1.0, 0.0)
        self.light = Colour(0.9, 0.9, 0.9)
        self.dark = Colour(0.15, 0.15, 0.2)

    def hit(self, ray):
        dy = ray.direction.y
        if -EPSILON < dy < EPSILON:
            return None
        t = (self.height - ray.origin.y) / dy
        if t > EPSILON:
            return t
        return None

    def normal_at(self, point):
        return self.normal

    def colour_at(self, point):
        if (int(math.floor(point.x)) + int(math.floor(point.z))) % 2 == 0:
            return self.light
        return self.dark


class Light:
    def __init__(self, position, colour):
        self.position = position
        self.colour = colour


class Scene:
    def __init__(self):
        self.things = [
            Sphere(Vec(0.0, 1.0, 5.0), 1.0, Colour(0.9, 0.2, 0.2), 0.3),
            Sphere(Vec(-2.2, 0.7, 6.5), 0.7, Colour(0.2, 0.8, 0.3), 0.1),
            Sphere(Vec(2.0, 1.4, 7.0), 1.4, Colour(0.3, 0.4, 0.95), 0.5),
            Floor(0.0, 0.2),
        ]
        self.lights = [
            Light(Vec(-4.0, 6.0, 1.0), Colour(0.8, 0.8, 0.8)),
            Light(Vec(5.0, 4.0, 3.0), Colour(0.4, 0.35, 0.3)),
        ]
        self.ambient = Colour(0.08, 0.08, 0.1)

    def nearest(self, ray):
        best_t = None
        best = None
        for thing in self.things:
            t = thing.hit(ray)
            if t is not None and (best_t is None or t < best_t):
                best_t = t
                best = thing
        return best, best_t

    def shadowed(self, point, to_light, distance):
        ray = Ray(point, to_light)
        for thing in self.things:
            t = thing.hit(ray)
            if t is not None and t < distance:
                return True
        return False

    def trace(self, ray, depth):
        thing, t = self.nearest(ray)
        if thing is None:
            k = 0.5 * (ray.direction.y + 1.0)
            return Colour(0.2 + 0.3 * k, 0.3 + 0.4 * k, 0.5 + 0.5 * k)
        point = ray.at(t)
        normal = thing.normal_at(point)
        base = thing.colour_at(point)
        result = base.tint(self.ambient)
        for light in self.lights:
            offset = light.position - point
            distance = offset.length()
            to_light = offset * (1.0 / distance)
            lambert = normal.dot(to_light)
            if lambert <= 0.0 or self.shadowed(point, to_light, distance):
                continue
            result = result.plus(base.tint(light.colour).scaled(lambert))
            half = (to_light - ray.direction).unit()
            spec = normal.dot(half)
            if spec > 0.0:
                result = result.plus(light.colour.scaled(spec ** 24 * thing.shine))
        if depth < MAX_DEPTH and thing.shine > 0.0:
            bounce = Ray(point, ray.direction.mirror(normal))
            result = result.plus(self.trace(bounce, depth + 1).scaled(thing.shine))
        return result


def render(scene, width, height):
    eye = Vec(0.0, 1.5, -1.0)
    total = 0.0
    hits = 0
    aspect = width / height
    for j in range(height):
        for i in range(width):
            px = (2.0 * (i + 0.5) / width - 1.0) * aspect
            py = 1.0 - 2.0 * (j + 0.5) / height
            direction = Vec(px, py - 0.2, 1.5).unit()
            ray = Ray(eye, direction)
            if scene.nearest(ray)[0] is not None:
                hits += 1
            c = scene.trace(ray, 0)
            total += min(c.r, 1.0) + min(c.g, 1.0) + min(c.b, 1.0)
    return total, hits


def run():
    return render(Scene(), WIDTH, HEIGHT)
