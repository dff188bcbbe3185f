"""Where the synthetic bundle's POIs sit: neighbourhood clusters around each Trace city's centre (its landmarks
plus a few random hubs) and a spread over ~12 km (used by `trace_dataset.yelp.synth`)."""

from __future__ import annotations

import math
import random

from trace_dataset.constants import CITIES, CITY_LANDMARKS


class CityLayout:
    """Neighbourhood clusters around a city's centre: its landmarks plus a few random hubs."""

    def __init__(self, city: str, rng: random.Random):
        c = CITIES[city]
        self.city = city
        self.lat0, self.lon0 = c.latitude, c.longitude
        self.landmarks = dict(CITY_LANDMARKS.get(city, {}))
        hubs = list(self.landmarks.values())
        for _ in range(6):
            d = rng.uniform(2.0, 9.0)
            a = rng.uniform(0, 2 * math.pi)
            hubs.append(self._offset(self.lat0, self.lon0, d * math.cos(a), d * math.sin(a)))
        self.hubs = hubs
        self.weights = [3.0] * len(self.landmarks) + [1.0] * (len(hubs) - len(self.landmarks))

    def _offset(self, lat: float, lon: float, north_km: float, east_km: float) -> tuple[float, float]:
        return lat + north_km / 111.0, lon + east_km / (111.0 * math.cos(math.radians(lat)))

    def place(self, rng: random.Random) -> tuple[float, float]:
        if rng.random() < 0.72:
            hub = rng.choices(self.hubs, weights=self.weights, k=1)[0]
            sigma = rng.choice((0.15, 0.25, 0.4))  # km: dense clusters, many POIs within 500 m
            lat, lon = self._offset(hub[0], hub[1], rng.gauss(0, sigma), rng.gauss(0, sigma))
        else:
            d = 12.0 * math.sqrt(rng.random())
            a = rng.uniform(0, 2 * math.pi)
            lat, lon = self._offset(self.lat0, self.lon0, d * math.cos(a), d * math.sin(a))
        return round(lat, 7), round(lon, 7)

    def nearest_landmark(self, lat: float, lon: float, within_km: float = 1.2) -> str | None:
        best, best_d = None, within_km
        for name, (la, lo) in self.landmarks.items():
            d = km(lat, lon, la, lo)
            if d <= best_d:
                best, best_d = name, d
        return best


def km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))
