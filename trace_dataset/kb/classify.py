"""Yelp categories -> one Trace POI type (restaurant, hotel, attraction) or None (not tourism).

Rules, applied in this priority order (the first that matches wins, so every POI gets exactly one type):

1. hotel       - any lodging category (Hotels, Bed & Breakfast, Resorts, Hostels, ...). A hotel with a
                 restaurant or bar inside is still a hotel: lodging is why a tourist picks it.
2. attraction  - any *primary* sight category (Museums, Parks, Tours, Landmarks, Zoos, Performing Arts, ...).
                 A museum with a cafe stays a museum.
3. restaurant  - `Restaurants` or an eat-in food category (Cafes, Bakeries, Food Trucks, Desserts, ...). A
                 restaurant that also lists Bars / Nightlife is a restaurant.
4. attraction  - a *secondary* leisure category (Nightlife, Bars, Music Venues, Wineries, Casinos, ...).
5. None        - everything else (dentists, auto repair, shopping, ...): dropped from the knowledge base.

Broad parent categories (`Food`, `Hotels & Travel`, `Arts & Entertainment`, `Active Life`) never decide a
type on their own: they also hold groceries, car rentals, psychics and gyms.
"""

from __future__ import annotations

from collections.abc import Iterable

HOTEL_CATEGORIES = frozenset(
    {
        "Hotels",
        "Bed & Breakfast",
        "Resorts",
        "Hostels",
        "Guest Houses",
        "Motels",
        "Inns",
        "Vacation Rentals",
        "Boutique Hotels",
        "Lodging",
    }
)

ATTRACTION_PRIMARY = frozenset(
    {
        "Museums",
        "Art Museums",
        "Children's Museums",
        "Art Galleries",
        "Parks",
        "State Parks",
        "National Parks",
        "Botanical Gardens",
        "Gardens",
        "Zoos",
        "Aquariums",
        "Landmarks & Historical Buildings",
        "Tours",
        "Walking Tours",
        "Historical Tours",
        "Boat Tours",
        "Bus Tours",
        "Food Tours",
        "Wine Tours",
        "Bike tours",
        "Architectural Tours",
        "Art Tours",
        "Beer Tours",
        "Scooter Tours",
        "Amusement Parks",
        "Water Parks",
        "Performing Arts",
        "Opera & Ballet",
        "Theater",
        "Stadiums & Arenas",
        "Planetarium",
        "Observatories",
        "Public Art",
        "Beaches",
        "Hiking",
        "Cultural Center",
        "Haunted Houses",
        "Historical Sites",
        "Wildlife Hunting Ranges",
        "Nature Preserves",
    }
)

RESTAURANT_CATEGORIES = frozenset(
    {
        "Restaurants",
        "Cafes",
        "Coffee & Tea",
        "Bakeries",
        "Desserts",
        "Ice Cream & Frozen Yogurt",
        "Food Trucks",
        "Food Stands",
        "Donuts",
        "Bagels",
        "Juice Bars & Smoothies",
        "Bubble Tea",
        "Creperies",
        "Gelato",
        "Patisserie/Cake Shop",
        "Tea Rooms",
    }
)

ATTRACTION_SECONDARY = frozenset(
    {
        "Nightlife",
        "Bars",
        "Cocktail Bars",
        "Wine Bars",
        "Dive Bars",
        "Pubs",
        "Sports Bars",
        "Lounges",
        "Dance Clubs",
        "Comedy Clubs",
        "Jazz & Blues",
        "Music Venues",
        "Karaoke",
        "Piano Bars",
        "Breweries",
        "Brewpubs",
        "Wineries",
        "Distilleries",
        "Casinos",
        "Cinema",
        "Festivals",
        "Escape Games",
        "Arcades",
        "Bowling",
        "Mini Golf",
        "Golf",
        "Kayaking",
        "Paddleboarding",
        "Boating",
        "Bike Rentals",
        "Rafting/Kayaking",
        "Horseback Riding",
        "Ziplining",
        "Climbing",
        "Skating Rinks",
        "Trampoline Parks",
        "Go Karts",
        "Country Dance Halls",
        "Social Clubs",
        "Tiki Bars",
        "Speakeasies",
        "Beer Gardens",
        "Whiskey Bars",
    }
)

# parents that also cover non-tourism businesses; never used as a stratum category either
GENERIC_CATEGORIES = frozenset(
    {
        "Restaurants",
        "Food",
        "Hotels & Travel",
        "Arts & Entertainment",
        "Active Life",
        "Nightlife",
        "Event Planning & Services",
        "Local Flavor",
        "Hotels",
        "Bars",
        "Tours",
    }
)

RULES: tuple[tuple[str, frozenset[str]], ...] = (
    ("hotel", HOTEL_CATEGORIES),
    ("attraction", ATTRACTION_PRIMARY),
    ("restaurant", RESTAURANT_CATEGORIES),
    ("attraction", ATTRACTION_SECONDARY),
)


def classify(categories: Iterable[str]) -> str | None:
    """The POI type of a business from its Yelp categories, or None when it is not a tourism POI."""
    cats = set(categories)
    for poi_type, names in RULES:
        if not cats.isdisjoint(names):
            return poi_type
    return None


def stratum_category(categories: Iterable[str], poi_type: str) -> str:
    """The category a POI is stratified by: its first specific (non-parent) category, e.g. the cuisine.

    Falls back to the first category that decided its type, then to the type itself.
    """
    cats = list(categories)
    for c in cats:
        if c not in GENERIC_CATEGORIES:
            return c
    for _, names in RULES:
        for c in cats:
            if c in names:
                return c
    return poi_type


def rating_bucket(stars: float) -> str:
    """Rating strata for sampling: low (< 3), mid (3-3.5), high (4-4.5), top (5)."""
    if stars < 3.0:
        return "low"
    if stars < 4.0:
        return "mid"
    if stars < 5.0:
        return "high"
    return "top"
